# Every reference page is a contract: what a function takes, returns, guarantees and refuses,
# with a runnable example. Measurements belong in vignette("validation") and the reasoning, with
# the figures behind each default, in inst/design.md, so the pages stay short and quote no run.

test_that("every reference page stays short and quotes no dated file or issue", {
  db <- tools::Rd_db("sgais")
  skip_if(length(db) == 0)
  for (name in c("sgais", "sgais_control", "ais", "nested_sampling")) {
    expect_false(is.null(db[[paste0(name, ".Rd")]]), info = name)
  }
  for (page in names(db)) {
    f <- tempfile(fileext = ".txt")
    tools::Rd2txt(db[[page]], out = f, options = list(underline_titles = FALSE))
    text <- readLines(f, warn = FALSE)
    unlink(f)
    expect_lte(length(text), 220, label = sprintf("lines of %s", page))
    expect_false(any(grepl("20[0-9]{2}-[0-9]{2}-[0-9]{2}", text)), info = page)
    expect_false(any(grepl("[Ii]ssue [0-9]", text)), info = page)
    expect_false(any(grepl("[Ss]eeds [0-9]+ ?(-|to) ?[0-9]", text)), info = page)
  }
})
