# The estimators' reference pages are contracts (issue 43, item 4): what each argument means,
# what a fit holds and short examples. Measurements belong in vignette("validation") and the
# reasoning in inst/design.md, so the pages stay short and quote no dated result files.

test_that("the estimators' reference pages stay short and quote no dated files", {
  db <- tools::Rd_db("sgais")
  skip_if(length(db) == 0)
  for (name in c("sgais", "sgais_control", "ais", "nested_sampling")) {
    rd <- db[[paste0(name, ".Rd")]]
    expect_false(is.null(rd), info = name)
    f <- tempfile(fileext = ".txt")
    tools::Rd2txt(rd, out = f, options = list(underline_titles = FALSE))
    text <- readLines(f, warn = FALSE)
    unlink(f)
    expect_lte(length(text), 220, label = sprintf("lines of ?%s", name))
    expect_false(any(grepl("20[0-9]{2}-[0-9]{2}-[0-9]{2}", text)), info = name)
  }
})
