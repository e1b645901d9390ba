# rounded to multiples of 1/1024, which a CSV file holds and read.csv() reads back exactly
stream_data <- function(n = 2600) {
  d <- simulate_linear_regression(n, seed = 41)
  d[] <- lapply(d, function(x) round(x * 1024) / 1024)
  d
}

same_fit <- function(a, b) {
  cols <- setdiff(names(a$trajectory), c("seconds", "chunk_seconds"))
  expect_identical(b$trajectory[cols], a$trajectory[cols])
  expect_identical(b$state$particles, a$state$particles)
}

test_that("every source gives the fit of all the rows at once", {
  # (20 particles, one move a step: the identities depend on neither)
  fit <- function(model, ...) {
    quietly(sgais(model, particles = 20, early_particles = 20, max_rounds = 1, seed = 3,
                  progress = FALSE, ...))
  }
  stream <- function(spec, source, ...) {
    quietly(sgais_stream(spec, source, particles = 20, early_particles = 20, max_rounds = 1,
                         seed = 3, progress = FALSE, ...))
  }
  d <- stream_data()
  whole <- fit(linear_regression(y ~ ., prior = "paper", data = d, noise_sd = 1))
  spec <- linear_regression(y ~ ., prior = "paper", data = head(d), noise_sd = 1)
  # in memory, in blocks that split chunks
  same_fit(whole, stream(spec, d, block_size = 777))
  # a data frame of another class, as nanoparquet::read_parquet() returns
  same_fit(whole, stream(spec, structure(d, class = c("tbl", "data.frame")), block_size = 777))
  # a CSV file read through a connection
  file <- withr::local_tempfile(fileext = ".csv")
  utils::write.csv(d, file, row.names = FALSE)
  same_fit(whole, stream(spec, file, block_size = 1000))
  # with a bounded reservoir too, whose fit holds less than a chunk of rows
  bounded <- fit(linear_regression(y ~ ., prior = "paper", data = d, noise_sd = 1),
                 reservoir_size = 2000)
  streamed <- stream(spec, file, block_size = 700, reservoir_size = 2000)
  same_fit(bounded, streamed)
  expect_identical(ncol(streamed$model$data$xt), 100L)
  # a function
  at <- 0
  next_rows <- function(n) {
    if (at >= nrow(d)) return(NULL)
    rows <- d[seq(at + 1, min(at + n, nrow(d))), ]
    at <<- at + nrow(rows)
    rows
  }
  same_fit(whole, stream(spec, next_rows, block_size = 600))
  # the matrix interface: a list of x (matrix or vector) and y
  x <- as.matrix(d[1:5])
  whole <- fit(linear_regression(x = x, y = d$y, prior = "paper", noise_sd = 1))
  spec <- linear_regression(x = x[1:10, ], y = d$y[1:10], prior = "paper", noise_sd = 1)
  same_fit(whole, stream(spec, list(x = x, y = d$y), block_size = 900))
  whole <- fit(linear_regression(x = d$x1, y = d$y, prior = "paper", noise_sd = 1))
  spec <- linear_regression(x = d$x1[1:10], y = d$y[1:10], prior = "paper", noise_sd = 1)
  same_fit(whole, stream(spec, list(x = d$x1, y = d$y), block_size = 900))
})

test_that("a database query is read with dbFetch() and gives the same fit", {
  skip_if_not_installed("DBI")
  skip_if_not_installed("RSQLite")
  d <- stream_data(1800)
  db <- withr::local_tempfile(fileext = ".sqlite")
  con <- DBI::dbConnect(RSQLite::SQLite(), db)
  on.exit(DBI::dbDisconnect(con), add = TRUE)
  DBI::dbWriteTable(con, "obs", d)
  res <- DBI::dbSendQuery(con, "SELECT * FROM obs")
  fit <- quietly(sgais_stream(linear_regression(y ~ ., prior = "paper", data = head(d),
                                                noise_sd = 1), res, block_size = 500, seed = 5,
                              progress = FALSE))
  expect_false(DBI::dbIsValid(res)) # cleared at the end
  same_fit(quietly(sgais(linear_regression(y ~ ., prior = "paper", data = d,
                                           noise_sd = 1), seed = 5, progress = FALSE)), fit)
})

test_that("an error from the source loses nothing: the fit so far comes with the error", {
  test_tags("memcheck")
  d <- stream_data()
  failing <- failing_source(d, 1500, function() stop("connection lost"))
  spec <- linear_regression(y ~ ., prior = "paper", data = head(d), noise_sd = 1)
  file <- withr::local_tempfile(fileext = ".rds")
  # (20 particles: what is kept does not depend on their number)
  e <- tryCatch(sgais_stream(spec, failing, block_size = 500, particles = 20,
                             early_particles = 20, seed = 3, checkpoint = file, progress = FALSE),
                sgais_error_stream = identity)
  expect_s3_class(e, "sgais_error_stream")
  expect_match(conditionMessage(e), "connection lost")
  expect_match(conditionMessage(e), "after 1,500 observations")
  expect_identical(e$fit$n, 1500L)
  # the checkpoint holds the same fit, and either continues to the fit of all the rows
  saved <- readRDS(file)
  expect_identical(saved$state$particles, e$fit$state$particles)
  whole <- quietly(sgais(linear_regression(y ~ ., prior = "paper", data = d,
                                           noise_sd = 1), particles = 20, early_particles = 20,
                         seed = 3, progress = FALSE))
  same_fit(whole, quietly(sgais_stream(saved, d[1501:2600, ], progress = FALSE)))
  same_fit(whole, quietly(sgais(e$fit, d[1501:2600, ], progress = FALSE)))
})

test_that("an interrupt between blocks keeps the fit of the blocks done", {
  d <- stream_data()
  interrupted <- failing_source(d, 1500, interrupt_now)
  spec <- linear_regression(y ~ ., prior = "paper", data = head(d), noise_sd = 1)
  expect_warning(
    fit <- sgais_stream(spec, interrupted, block_size = 500, seed = 3, progress = FALSE),
    "after 1,500 observations.*after the first 1,500", class = "sgais_warning_interrupted"
  )
  expect_identical(fit$n, 1500L)
  whole <- quietly(sgais(linear_regression(y ~ ., prior = "paper", data = d,
                                           noise_sd = 1), seed = 3, progress = FALSE))
  same_fit(whole, quietly(sgais(fit, d[1501:2600, ], progress = FALSE)))
})

test_that("checkpoints are written whole and hold a continuable fit", {
  test_tags("memcheck")
  d <- stream_data(1200)
  file <- withr::local_tempfile(fileext = ".rds")
  # (20 particles, one move a step: what is written depends on neither)
  fit <- quietly(sgais_stream(linear_regression(y ~ ., prior = "paper", data = head(d),
                                                noise_sd = 1), d, block_size = 400,
                              checkpoint = file, checkpoint_every = 1e-9, particles = 20,
                              early_particles = 20, max_rounds = 1, seed = 2,
                              progress = FALSE))
  expect_true(file.exists(file))
  expect_identical(list.files(dirname(file), pattern = "\\.tmp$", all.files = TRUE), character(0))
  expect_identical(readRDS(file)$state$particles, fit$state$particles)
})

test_that("a checkpoint never replaces the data, follows no planted link, and is checked first", {
  d <- stream_data(600)
  spec <- linear_regression(y ~ ., prior = "paper", data = head(d), noise_sd = 1)
  dir <- withr::local_tempdir()
  csv <- file.path(dir, "data.csv")
  utils::write.csv(d, csv, row.names = FALSE)
  before <- readLines(csv)
  # the file being read, by its own name or through a link to it
  expect_error(sgais_stream(spec, csv, checkpoint = csv, progress = FALSE),
               "the file `source` reads", class = "sgais_error_checkpoint")
  link <- file.path(dir, "fit.rds")
  file.symlink(csv, link)
  expect_error(sgais_stream(spec, csv, checkpoint = link, progress = FALSE),
               "the file `source` reads", class = "sgais_error_checkpoint")
  expect_identical(readLines(csv), before)
  # a directory that does not exist, or a directory: refused before any work
  expect_error(sgais_stream(spec, d, checkpoint = file.path(dir, "no", "fit.rds"),
                            progress = FALSE), "does not exist", class = "sgais_error_checkpoint")
  expect_error(sgais_stream(spec, d, checkpoint = dir, progress = FALSE), "is a directory",
               class = "sgais_error_checkpoint")
  # a link planted at the old predictable temporary name is not followed
  target <- file.path(dir, "victim.txt")
  writeLines("keep me", target)
  out <- file.path(dir, "out.rds")
  file.symlink(target, paste0(out, ".tmp"))
  fit <- quietly(sgais_stream(spec, d, checkpoint = out, checkpoint_every = 1e-9, seed = 1,
                              progress = FALSE))
  expect_identical(readLines(target), "keep me")
  expect_identical(readRDS(out)$log_evidence, fit$log_evidence)
})

test_that("sgais_stream() checks its arguments", {
  d <- stream_data(300)
  spec <- linear_regression(y ~ ., prior = "paper", data = head(d), noise_sd = 1)
  expect_error(sgais_stream(spec), "`source` is missing", class = "sgais_error")
  expect_error(sgais_stream(spec, 42), "`source` must be", class = "sgais_error")
  expect_error(sgais_stream(spec, "no/such/file.csv"), "there is no file", class = "sgais_error")
  expect_error(sgais_stream(spec, d, block_size = 0), "`block_size`", class = "sgais_error")
  expect_error(sgais_stream(spec, d, checkpoint = NA), "`checkpoint`", class = "sgais_error")
  expect_error(sgais_stream(spec, function(n) NULL, progress = FALSE), "gave no rows",
               class = "sgais_error")
  fit <- quietly(sgais_stream(spec, d, seed = 1, progress = FALSE))
  expect_error(sgais_stream(fit, d, particles = 5), "its own settings", class = "sgais_error")
  expect_error(sgais_stream(fit, d, seed = 2), "its own settings", class = "sgais_error")
  expect_error(sgais_stream(fit, d, replicates = 2), "its own settings", class = "sgais_error")
  expect_error(sgais_stream(spec, d[, -1], progress = FALSE), class = "sgais_error_missing_column")
})

test_that("an interrupt inside a block keeps the fit up to the last whole chunk", {
  skip_on_cran()
  skip_on_os("windows")
  # a run of several seconds (issue 12 made 4 x 10^5 rows nearly as fast as the 1.5 s this waited)
  d <- simulate_linear_regression(1e6, seed = 13)
  spec <- linear_regression(y ~ ., prior = "paper", data = head(d), noise_sd = 1)
  file <- withr::local_tempfile(fileext = ".rds")
  interrupt_in(1)
  w <- NULL
  fit <- withCallingHandlers(
    tryCatch(sgais_stream(spec, d, block_size = 1e5, seed = 4, checkpoint = file,
                          progress = FALSE),
             error = function(e) NULL), # interrupted before the first chunk was done
    sgais_warning_interrupted = function(x) {
      w <<- x
      invokeRestart("muffleWarning")
    },
    sgais_warning_unreliable = function(x) invokeRestart("muffleWarning")
  )
  if (is.null(fit)) skip("the interrupt came before the first chunk was done")
  n <- fit$n
  expect_s3_class(w, "sgais_warning_interrupted")
  expect_match(conditionMessage(w), sprintf("after the first %s\\.", format(n, big.mark = ",")))
  expect_true(n > 0 && n < 1e6 && n %% fit$settings$chunk_size == 0)
  # the checkpoint holds it, and it is the fit of the first n rows in one run
  expect_identical(readRDS(file)$state$particles, fit$state$particles)
  same_fit(quietly(sgais(linear_regression(y ~ ., prior = "paper", data = d[seq_len(n), ],
                                           noise_sd = 1), seed = 4, progress = FALSE)),
           fit)
})

test_that("blocks are added in groups that grow with the rows held, and bound row by row", {
  d <- stream_data(1000)
  held <- 0
  next_group <- sgais:::grouped_blocks(sgais:::stream_source(d, 50, NULL), 50, function() held)
  sizes <- integer(0)
  got <- list()
  while (!is.null(g <- next_group(50))) {
    sizes <- c(sizes, nrow(g))
    got[[length(got) + 1L]] <- g
    held <- held + nrow(g)
  }
  # each group but the last adds at least a quarter of the rows held before it (and a block)
  before <- cumsum(c(0, head(sizes, -1)))
  expect_true(all(head(sizes >= pmax(50, 0.25 * before), -1)))
  expect_true(any(sizes > 50))
  expect_lt(length(sizes), 1000 / 50)
  expect_identical(do.call(rbind, got), d)
  # matrices and lists of x and y are bound too
  m <- as.matrix(d)
  expect_identical(sgais:::bind_rows_of(list(m[1:3, ], m[4:10, ])), m[1:10, ])
  xy <- list(x = m[, -1], y = m[, 1])
  parts <- list(list(x = xy$x[1:4, ], y = xy$y[1:4]), list(x = xy$x[5:9, ], y = xy$y[5:9]))
  expect_identical(sgais:::bind_rows_of(parts), list(x = xy$x[1:9, ], y = xy$y[1:9]))
  v <- list(list(x = 1:3, y = 4:6), list(x = 7L, y = 8L))
  expect_identical(sgais:::bind_rows_of(v), list(x = c(1:3, 7L), y = c(4:6, 8L)))
})

test_that("a CSV column's type is not fixed by its first block, and errors name the stream's row", {
  d <- stream_data(600)
  spec <- linear_regression(y ~ ., prior = "paper", data = head(d), noise_sd = 1)
  file <- withr::local_tempfile(fileext = ".csv")
  whole <- d
  whole$x1[1:200] <- round(whole$x1[1:200]) # whole numbers in the first block, decimals later
  utils::write.csv(whole, file, row.names = FALSE)
  fit <- quietly(sgais_stream(linear_regression(y ~ ., prior = "paper", data = head(whole),
                                                noise_sd = 1), file,
                              block_size = 200, seed = 1, progress = FALSE))
  same <- quietly(sgais_stream(linear_regression(y ~ ., prior = "paper", data = head(whole),
                                                 noise_sd = 1), whole,
                               block_size = 200, seed = 1, progress = FALSE))
  expect_identical(fit$log_evidence, same$log_evidence)
  # a bad value in the third block: its row in the stream and its line in the file
  bad <- d
  bad$x2[450] <- NA
  utils::write.csv(bad, file, row.names = FALSE)
  e <- tryCatch(sgais_stream(spec, file, block_size = 200, seed = 1, progress = FALSE),
                sgais_error_stream = function(e) e)
  expect_s3_class(e, "sgais_error_stream")
  expect_match(conditionMessage(e), "at row 450 of the stream \\(line 451 of the file\\)")
  expect_s3_class(e$parent, "sgais_error_non_finite")
  expect_identical(e$parent$row, 450)
  expect_equal(e$fit$n, 400)
  e <- tryCatch(sgais_stream(spec, bad, block_size = 200, seed = 1, progress = FALSE),
                sgais_error_stream = function(e) e)
  expect_match(conditionMessage(e), "at row 450 of the stream\\.")
})

# The rows of a CSV file holding `lines`, read by stream_source() in blocks of `block` rows with
# `reader` ("fread" or "read.csv"): the blocks, or the error.
read_csv_blocks <- function(lines, reader, block = 3, crlf = FALSE) {
  file <- withr::local_tempfile(fileext = ".csv")
  # (with Windows line ends, and no newline after the last line)
  if (crlf) writeBin(charToRaw(paste(lines, collapse = "\r\n")), file) else writeLines(lines, file)
  withr::local_options(sgais.csv_reader = reader)
  tryCatch({
    next_block <- sgais:::stream_source(file, block, NULL)
    blocks <- list()
    while (!is.null(b <- next_block(block))) blocks[[length(blocks) + 1L]] <- b
    blocks
  }, error = identity)
}

test_that("a CSV file read by fread() gives the fit read.csv() gives, to the last bit", {
  skip_if_not_installed("data.table")
  d <- stream_data(1600)
  file <- withr::local_tempfile(fileext = ".csv")
  utils::write.csv(d, file, row.names = FALSE)
  spec <- linear_regression(y ~ ., prior = "paper", data = head(d), noise_sd = 1)
  # (values are multiples of 1/1024, which every parser reads exactly; 20 particles, one move a
  # step: the identity depends on neither)
  fit <- function(reader) {
    withr::local_options(sgais.csv_reader = reader)
    quietly(sgais_stream(spec, file, block_size = 300, particles = 20, early_particles = 20,
                         max_rounds = 1, seed = 6, progress = FALSE))
  }
  same_fit(fit("read.csv"), fit("fread"))
  # each block is the rows of the file, with the types of a data frame read whole
  for (reader in c("fread", "read.csv")) {
    blocks <- read_csv_blocks(readLines(file), reader, block = 700)
    expect_identical(vapply(blocks, nrow, 1L), c(700L, 700L, 200L))
    expect_identical(do.call(rbind, blocks), utils::read.csv(file), info = reader)
  }
  # a last line without its newline, Windows line ends and blank lines
  lines <- c("a,b", "1,2", "", "3,4.5", "5,6", "7,8")
  expected <- data.frame(a = c(1, 3, 5, 7), b = c(2, 4.5, 6, 8))
  for (reader in c("fread", "read.csv")) {
    blocks <- read_csv_blocks(lines, reader, block = 2, crlf = TRUE)
    got <- do.call(rbind, blocks)
    rownames(got) <- NULL
    expect_equal(got, expected, info = reader)
  }
})

test_that("a CSV file's column types are those of its first block", {
  for (reader in c(if (requireNamespace("data.table", quietly = TRUE)) "fread", "read.csv")) {
    # labels that happen to be digits stay labels; whole numbers then decimals are numbers; a
    # column empty in the first block is read as it comes
    blocks <- read_csv_blocks(c("a,b,c", "1,x,", "2,y,", "3,z,", "4.5,8,1.5", "5,10,2"), reader)
    expect_identical(blocks[[2]], data.frame(a = c(4.5, 5), b = c("8", "10"), c = c(1.5, 2)),
                     ignore_attr = "row.names", info = reader)
  }
})

test_that("a bad line of a CSV file is named", {
  skip_if_not_installed("data.table")
  good <- c("a,b", "1,2", "3,4", "5,6", "7,8", "9,10", "11,12")
  text <- replace(good, 6, "9,ten")
  e <- read_csv_blocks(text, "fread")
  expect_s3_class(e, "sgais_error_column_type")
  expect_match(conditionMessage(e), "Column `b` of the file holds \"ten\" at line 6")
  expect_identical(e$line, 6)
  # read.csv() names the lines of the block
  e <- read_csv_blocks(text, "read.csv")
  expect_s3_class(e, "sgais_error_csv_line")
  expect_match(conditionMessage(e), "Lines 5 to 7 of the file")
  # a line of another number of fields, which fread() alone would skip or drop
  for (bad in c("9,10,0", "9", "")) {
    lines <- replace(good, 6, bad)
    if (!nzchar(bad)) lines <- c(good[1:6], "1")
    e <- read_csv_blocks(lines, "fread")
    expect_s3_class(e, "sgais_error_csv_line")
    expect_identical(e$line, if (nzchar(bad)) 6 else 7)
  }
  e <- read_csv_blocks(replace(good, 3, "3,4,0"), "fread")
  expect_match(conditionMessage(e), "Line 3 of the file has 3 fields, not the 2 of its header")
  # in a stream, with the fit of the blocks before it
  d <- stream_data(600)
  file <- withr::local_tempfile(fileext = ".csv")
  utils::write.csv(d, file, row.names = FALSE)
  lines <- readLines(file)
  lines[452] <- sub(",[^,]*$", ",oops", lines[452])
  writeLines(lines, file)
  e <- tryCatch(sgais_stream(linear_regression(y ~ ., prior = "paper", data = head(d),
                                               noise_sd = 1), file, block_size = 200,
                             particles = 20, early_particles = 20, seed = 1, progress = FALSE),
                sgais_error_stream = identity)
  expect_s3_class(e$parent, "sgais_error_column_type")
  expect_identical(e$parent$line, 452)
  expect_equal(e$fit$n, 400)
})
