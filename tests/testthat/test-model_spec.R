# Models keep a specification apart from their data: model_data() turns new rows into the data the
# C core reads with the spec alone, and model_with_data() gives a copy of a model on those rows.

# A data frame with every kind of column a formula can use: a factor with its own contrasts, an
# ordered factor, a character column, a logical, and numbers (z > 0 for log()).
mixed_data <- function(n = 60, seed = 1) {
  data <- simulate_linear_regression(n, dim = 3, seed = seed)
  withr::with_seed(seed, {
    data$f <- factor(sample(c("a", "b", "c"), n, TRUE), levels = c("c", "a", "b"))
    data$o <- factor(sample(c("lo", "mid", "hi"), n, TRUE), levels = c("lo", "mid", "hi"),
                     ordered = TRUE)
    data$g <- sample(c("u", "v"), n, TRUE)
  })
  contrasts(data$f) <- contr.sum(3)
  data$z <- exp(data$x3)
  data$flag <- data$x1 > 0
  data
}

# The rows of `data` (a data frame, matrix or vector) cut before the rows `at`.
split_rows <- function(data, at) {
  n <- NROW(data)
  starts <- c(1L, at)
  ends <- c(at - 1L, n)
  lapply(seq_along(starts), function(i) {
    rows <- seq.int(starts[i], ends[i])
    if (is.null(dim(data))) data[rows] else data[rows, , drop = FALSE]
  })
}

# model_data() of each piece, bound back together into one data list.
bind_pieces <- function(model, pieces) {
  parts <- lapply(pieces, function(rows) model_data(model, rows))
  fields <- names(parts[[1]])
  out <- lapply(fields, function(field) {
    values <- lapply(parts, `[[`, field)
    if (is.matrix(values[[1]])) do.call(cbind, values) else do.call(c, values)
  })
  stats::setNames(out, fields)
}

# Pieces as a regression's matrix interface takes them: list(x = , y = ).
xy_pieces <- function(x, y, at) {
  Map(function(x, y) list(x = x, y = y), split_rows(x, at), split_rows(y, at))
}

at <- c(2L, 18L, 19L, 41L) # pieces of 1, 16, 1, 22 and 20 rows: some lack factor levels

test_that("formula models: the pieces' data bound together are the model's data", {
  data <- mixed_data()
  formulas <- list(
    y ~ .,
    y ~ f * x1 + poly(x2, 3) + log(z) - 1,
    y ~ o + g:x3 + scale(x1) + flag + splines::ns(x2, df = 3)
  )
  for (formula in formulas) {
    model <- linear_regression(formula, data, noise_sd = 1)
    expect_identical(bind_pieces(model, split_rows(data, at)), model$data)
    expect_identical(model_data(model, data), model$data)
  }
  softmax_data <- simulate_softmax_regression(60, dim = 2, classes = 3, seed = 2)
  softmax_data$y <- factor(softmax_data$y, levels = c("3", "1", "2"))
  softmax_data$f <- mixed_data()$f
  model <- softmax_regression(y ~ f:x1 + poly(x2, 2), softmax_data)
  expect_identical(model$classes, c("3", "1", "2"))
  expect_identical(bind_pieces(model, split_rows(softmax_data, at)), model$data)
})

test_that("categories may come back as characters or with their levels in another order", {
  data <- mixed_data()
  model <- linear_regression(y ~ f * x1 + o + g, data, noise_sd = 1)
  rows <- data[18:40, ]
  expected <- model_data(model, rows)
  expect_identical(expected$xt, model$data$xt[, 18:40])
  rows$f <- as.character(rows$f)
  rows$o <- factor(rows$o, levels = c("hi", "lo", "mid"))
  rows$g <- factor(rows$g, levels = c("v", "u"))
  expect_identical(model_data(model, rows), expected)
  # the coding is the spec's, not that of options(contrasts) now
  withr::local_options(contrasts = c("contr.helmert", "contr.treatment"))
  expect_identical(model_data(model, rows), expected)
  # softmax labels as codes or characters: the classes keep the model's order
  softmax_data <- simulate_softmax_regression(60, dim = 2, classes = 3, seed = 2)
  softmax_data$y <- factor(softmax_data$y, levels = c("3", "1", "2"))
  model <- softmax_regression(y ~ ., softmax_data)
  rows <- softmax_data[5:30, ]
  expected <- model_data(model, rows)
  expect_identical(expected$y, match(as.character(rows$y), c("3", "1", "2")))
  rows$y <- as.integer(as.character(rows$y))
  expect_identical(model_data(model, rows), expected)
  rows$y <- as.character(rows$y)
  expect_identical(model_data(model, rows), expected)
})

test_that("poly() and scale() keep the coefficients of the rows the model was built from", {
  data <- mixed_data()
  model <- linear_regression(y ~ poly(x2, 3) + scale(x1), data, noise_sd = 1)
  expect_false(is.null(attr(model$spec$terms, "predvars")))
  # one row alone: poly() of one point would fail, scale() of one point would be NaN
  expect_identical(model_data(model, data[7, ])$xt, model$data$xt[, 7, drop = FALSE])
  # the design is that of lm() (poly()'s recurrence differs from its QR in the last bits)
  reference <- model.matrix(lm(y ~ poly(x2, 3) + scale(x1), data))
  expect_equal(model$data$xt, t(unname(reference[, ])), tolerance = 1e-12)
})

test_that("matrix interfaces: pieces by position, or by name in any order", {
  data <- mixed_data()
  x <- as.matrix(data[c("x1", "x2", "x3")])
  for (model in list(linear_regression(x = x, y = data$y, noise_sd = 1),
                     linear_regression(x = unname(x), y = data$y, noise_sd = 1))) {
    expect_identical(bind_pieces(model, xy_pieces(x, data$y, at)), model$data)
  }
  model <- linear_regression(x = x, y = data$y, noise_sd = 1)
  expect_identical(model_data(model, list(x = data[c("x3", "x1", "x2")], y = data$y)), model$data)
  expect_identical(model_data(model, data.frame(y = data$y, x = I(x))), model$data)
  labels <- c("b", "a", "c")[1 + (data$x1 > 0) + (data$x2 > 0)]
  model <- softmax_regression(x = x, y = labels)
  expect_identical(bind_pieces(model, xy_pieces(x, labels, at)), model$data)
  model <- softmax_regression(x = data$x1, y = labels)
  expect_identical(bind_pieces(model, xy_pieces(data$x1, labels, at)), model$data)
  # mixtures: a data frame, an unnamed matrix, one dimension as a vector
  y <- simulate_gaussian_mixture(60, components = 2, dim = 3, seed = 4)
  model <- gaussian_mixture(y, components = 2)
  expect_identical(bind_pieces(model, split_rows(y, at)), model$data)
  expect_identical(model_data(model, y[c("y3", "y1", "y2")]), model$data)
  expect_identical(model_data(model, as.matrix(y)), model$data)
  model <- gaussian_mixture(unname(as.matrix(y)), components = 2)
  expect_identical(bind_pieces(model, split_rows(unname(as.matrix(y)), at)), model$data)
  expect_identical(model_data(model, y), model$data) # unnamed model: by position
  model <- gaussian_mixture(y$y1, components = 1)
  expect_identical(bind_pieces(model, split_rows(y$y1, at)), model$data)
})

test_that("the spec holds the design, the classes and the hyperparameters", {
  data <- mixed_data()
  model <- linear_regression(y ~ f + x1, data, noise_sd = 2)
  spec <- model$spec
  expect_identical(spec$interface, "formula")
  expect_s3_class(spec$terms, "terms")
  expect_identical(spec$xlevels, list(f = c("c", "a", "b")))
  expect_identical(spec$contrasts, list(f = `dimnames<-`(contr.sum(3), list(c("c", "a", "b"), NULL))))
  expect_identical(spec$response, "y")
  expect_identical(names(spec$column_classes), names(data))
  expect_identical(spec$column_classes[["g"]], "character")
  expect_identical(spec$design_columns, model$parameter_names)
  expect_null(spec$row_by_row)
  expect_identical(spec$hyper, model$hyper)
  # `y ~ .` is expanded when the model is built
  expect_identical(attr(linear_regression(y ~ ., data, noise_sd = 1)$spec$terms, "term.labels"),
                   setdiff(names(data), "y"))
  model <- softmax_regression(Species ~ Petal.Width, iris)
  expect_identical(model$spec$classes, levels(iris$Species))
  model <- gaussian_mixture(unname(as.matrix(iris[1:2])), components = 2)
  expect_identical(model$spec[c("columns", "named")], list(columns = c("y1", "y2"), named = FALSE))
  expect_identical(model$spec$hyper, model$hyper)
})

test_that("rows that do not fit the spec are errors that name what is wrong", {
  data <- mixed_data()
  model <- linear_regression(y ~ f * x1 + g, data, noise_sd = 1)
  rows <- data[1:5, ]
  mismatch <- function(rows, class, pattern, m = model) {
    err <- expect_error(model_data(m, rows), pattern, class = class)
    expect_s3_class(err, c("sgais_error_data_mismatch", "sgais_error"))
    invisible(err)
  }
  bad <- rows; bad$f <- as.character(bad$f); bad$f[3] <- "d"
  err <- mismatch(bad, "sgais_error_unseen_level",
                  "`new_data` has the level \"d\" of `f` that the model was not built with \\(it knows \"c\", \"a\", \"b\"\\)")
  expect_identical(err$column, "f")
  expect_identical(err$level, "d")
  bad <- rows; bad$g[1:2] <- c("w", "x")
  mismatch(bad, "sgais_error_unseen_level", "the levels \"w\", \"x\" of `g`")
  err <- mismatch(rows[setdiff(names(rows), "x1")], "sgais_error_missing_column",
                  "`new_data` has no column `x1`, which the model uses")
  expect_identical(err$column, "x1")
  mismatch(rows[setdiff(names(rows), "y")], "sgais_error_missing_column", "no column `y`")
  err <- mismatch(cbind(rows, w = 1, v = 2), "sgais_error_extra_column",
                  "`new_data` has columns `w`, `v` that the model was not built with.*drop them")
  expect_identical(err$column, c("w", "v"))
  # columns the data had but the formula does not use may be there or not
  expect_identical(model_data(model, rows[c("y", "x1", "f", "g")]), model_data(model, rows))
  # with `y ~ .` a new column would not be used: an error too
  mismatch(cbind(rows, w = 1), "sgais_error_extra_column", "`w`.*also with `y ~ .`",
           linear_regression(y ~ ., data, noise_sd = 1))
  bad <- rows; bad$x1 <- as.character(bad$x1)
  err <- mismatch(bad, "sgais_error_column_type",
                  "Column `x1` of `new_data` is categorical \\(a factor or character\\), but it was numeric")
  expect_identical(err$column, "x1")
  bad <- rows; bad$g <- bad$x1 > 0
  mismatch(bad, "sgais_error_column_type", "`g` of `new_data` is logical, but it was categorical")
  model <- linear_regression(y ~ I(x1 - mean(x1)) + x2, data, noise_sd = 1)
  mismatch(rows, "sgais_error_not_row_by_row",
           "design column `I\\(x1 - mean\\(x1\\)\\)` depends on all the rows at once")

  # softmax: a class label the model does not know
  softmax_data <- simulate_softmax_regression(60, dim = 2, classes = 3, seed = 2)
  model <- softmax_regression(y ~ ., softmax_data)
  bad <- softmax_data[1:4, ]; bad$y <- c("1", "9", "2", "9")
  err <- mismatch(bad, "sgais_error_unseen_class",
                  "the response `y` in `new_data` has the class \"9\" that the model was not built with \\(it knows \"1\", \"2\", \"3\"\\)")
  expect_identical(err$class_label, "9")
  model <- softmax_regression(x = as.matrix(softmax_data[1:2]), y = softmax_data$y)
  mismatch(list(x = as.matrix(softmax_data[1:2]), y = rep(4, 60)), "sgais_error_unseen_class",
           "`new_data\\$y` has the class \"4\"")

  # matrix interfaces: columns by name, or as many by position
  x <- as.matrix(data[c("x1", "x2")])
  model <- linear_regression(x = x, y = data$y, noise_sd = 1)
  mismatch(list(x = x[, "x1", drop = FALSE], y = data$y), "sgais_error_missing_column",
           "`new_data\\$x` has no column `x2`")
  mismatch(list(x = cbind(x, x3 = 1), y = data$y), "sgais_error_extra_column",
           "`new_data\\$x` has a column `x3` that the model was not built with")
  err <- mismatch(list(x = unname(cbind(x, 1)), y = data$y), "sgais_error_column_count",
                  "`new_data\\$x` has 3 columns, but the model was built with 2 \\(`x1`, `x2`\\)")
  y <- simulate_gaussian_mixture(20, components = 2, seed = 4)
  model <- gaussian_mixture(y, components = 2)
  mismatch(unname(as.matrix(y))[, 1], "sgais_error_column_count",
           "`new_data` has 1 column, but the model was built with 2 \\(`y1`, `y2`\\)")
  mismatch(y["y1"], "sgais_error_missing_column", "`new_data` has no column `y2`")
  mismatch(cbind(y, y3 = 0), "sgais_error_extra_column", "`new_data` has a column `y3`")
})

test_that("new rows are checked as the model's data were", {
  data <- mixed_data()
  model <- linear_regression(y ~ x1 + f, data, noise_sd = 1)
  bad <- data[1:5, ]; bad$x1[2] <- NA
  err <- expect_error(model_data(model, bad), "`new_data` contains non-finite.*`x1` at row 2",
                      class = "sgais_error_non_finite")
  expect_identical(err$row, 2L)
  bad <- data[1:5, ]; bad$y[4] <- Inf
  expect_error(model_data(model, bad), "response `y` in `new_data` contains a non-finite value.*observation 4",
               class = "sgais_error_non_finite")
  expect_error(model_data(model, data[0, ]), "`new_data` must have at least one row")
  expect_error(model_data(model, as.matrix(data[1:3])), "`new_data` must be a data frame")
  softmax_data <- simulate_softmax_regression(30, dim = 2, classes = 3, seed = 2)
  model <- softmax_regression(y ~ ., softmax_data)
  bad <- softmax_data; bad$y[3] <- NA
  expect_error(model_data(model, bad), "contains a missing or infinite value.*observation 3",
               class = "sgais_error_non_finite")
  model <- linear_regression(x = data$x1, y = data$y, noise_sd = 1)
  expect_error(model_data(model, data), "`new_data` must be a list with the covariates `x` and the response `y`")
  expect_error(model_data(model, list(x = data$x1, y = data$y[-1])),
               "`new_data\\$x` has 60 rows but `new_data\\$y` has 59 elements")
  y <- simulate_gaussian_mixture(20, components = 2, seed = 4)
  model <- gaussian_mixture(y, components = 2)
  bad <- y; bad$y2[5] <- Inf
  expect_error(model_data(model, bad), "`new_data` contains non-finite.*`y2` at row 5",
               class = "sgais_error_non_finite")
  expect_error(model_data(model, letters), "`new_data` must be a numeric matrix or data frame")
  # a model without a spec (saved by an older version) and things that are not models
  old <- model; old$spec <- NULL
  expect_error(model_data(old, y), "built without a specification", class = "sgais_error")
  expect_error(model_data(list(), y), "`model` must be an sgais model")
})

test_that("model_with_data() is the model on the new rows only", {
  data <- mixed_data()
  rows <- data[21:35, ]
  cases <- list(
    list(model = linear_regression(y ~ f * x1 + poly(x2, 2), data, noise_sd = 1), rows = rows),
    list(model = softmax_regression(f ~ x1 + x2, data), rows = rows),
    list(model = gaussian_mixture(data[c("x1", "x2")], components = 2), rows = rows[c("x1", "x2")])
  )
  for (case in cases) {
    model <- case$model
    chunk <- model_with_data(model, case$rows)
    expect_identical(chunk$n, 15L)
    expect_identical(nobs(chunk), 15L)
    expect_identical(chunk$data, model_data(model, case$rows))
    expect_identical(chunk$data, lapply(model$data, function(field) {
      if (is.matrix(field)) field[, 21:35, drop = FALSE] else field[21:35]
    }))
    for (field in c("spec", "hyper", "parameter_names", "dim", "family", "label", "details")) {
      expect_identical(chunk[[field]], model[[field]])
    }
    expect_identical(class(chunk), class(model))
    expect_identical(model$n, 60L) # the model itself is left alone
    # the C core reads the copy as it reads those rows of the model
    theta <- withr::with_seed(1, rnorm(model$dim, sd = 0.3))
    expect_equal(model_evaluate(chunk, theta), model_evaluate(model, theta, start = 20L, n = 15L))
  }
  # on all the rows, the copy is the model
  expect_identical(model_with_data(cases[[1]]$model, data), cases[[1]]$model)
})

test_that("a saved fit runs no code: formulas are evaluated among transformations only", {
  marker <- tempfile()
  d <- simulate_linear_regression(300, seed = 1)
  m <- linear_regression(y ~ poly(x1, 2) + log(abs(x2) + 1) + splines::ns(x3, 3) + x4:x5,
                         prior = "paper", data = d[1:200, ], noise_sd = 1)
  fit <- quietly(sgais(m, control = sgais_control("paper"), seed = 1, progress = FALSE))
  clean <- quietly(sgais(fit, d[201:300, ], progress = FALSE))
  # a crafted fit, written to a file and read back: code in the stored terms' predvars ...
  crafted <- fit
  pv <- attr(crafted$model$spec$terms, "predvars")
  pv[[2L]] <- call("file.create", marker)
  attr(crafted$model$spec$terms, "predvars") <- pv
  path <- tempfile(fileext = ".rds")
  saveRDS(crafted, path)
  expect_error(sgais(readRDS(path), d[201:300, ], progress = FALSE), "calls `file.create`",
               class = "sgais_error_formula_function")
  expect_error(sgais_stream(readRDS(path), d[201:300, ], block_size = 50, progress = FALSE),
               class = "sgais_error_formula_function")
  expect_false(file.exists(marker))
  # ... or a stored environment whose log() runs code: the formula sees the real log()
  crafted <- fit
  env <- new.env()
  assign("log", function(x) {
    file.create(marker)
    base::log(x)
  }, envir = env)
  environment(crafted$model$spec$terms) <- env
  saveRDS(crafted, path)
  again <- quietly(sgais(readRDS(path), d[201:300, ], progress = FALSE))
  expect_false(file.exists(marker))
  expect_identical(again$log_evidence, clean$log_evidence)
  # new formulas too may use only the transformations a continuation can apply again
  expect_error(linear_regression(y ~ myfun(x1), data = d, noise_sd = 1), "calls `myfun`",
               class = "sgais_error_formula_function")
  expect_error(linear_regression(y ~ base::system(x1), data = d, noise_sd = 1), "base::system",
               class = "sgais_error_formula_function")
  expect_s3_class(linear_regression(y ~ stats::poly(x1, 2) + I(x2^2), data = d,
                                    noise_sd = 1), "sgais_model")
})

test_that("duplicated column names are refused, naming them", {
  d <- stats::setNames(simulate_linear_regression(20, seed = 1)[1:3], c("y", "x1", "x1"))
  expect_error(linear_regression(y ~ x1, d, noise_sd = 1), "`x1` is given more than once",
               class = "sgais_error_argument")
  expect_error(gaussian_mixture(d, components = 1), "`x1`", class = "sgais_error_argument")
})

test_that("numbers in classes model.matrix() misreads are converted or refused", {
  skip_if_not_installed("bit64")
  d <- simulate_linear_regression(200, seed = 3)
  d$k <- round(d$x1 * 1000)
  plain <- linear_regression(y ~ k + x2, prior = "paper", data = d, noise_sd = 1)
  big <- d
  big$k <- bit64::as.integer64(d$k)
  m <- linear_regression(y ~ k + x2, prior = "paper", data = big, noise_sd = 1)
  expect_identical(exact_log_evidence(m), exact_log_evidence(plain))
  # the same through new rows (a stream's blocks from a database come as integer64 too)
  fit <- quietly(sgais(linear_regression(y ~ k + x2, prior = "paper", data = d[1:100, ],
                                         noise_sd = 1),
                       seed = 1, progress = FALSE))
  more <- quietly(sgais(fit, big[101:200, ], progress = FALSE))
  same <- quietly(sgais(fit, d[101:200, ], progress = FALSE))
  expect_identical(more$log_evidence, same$log_evidence)
  # ... and through a database, which gives big INTEGER columns as integer64
  if (requireNamespace("RSQLite", quietly = TRUE)) {
    con <- DBI::dbConnect(RSQLite::SQLite(), ":memory:", bigint = "integer64")
    DBI::dbWriteTable(con, "rows", big[101:200, c("y", "k", "x2")])
    res <- DBI::dbSendQuery(con, "SELECT * FROM rows")
    from_db <- quietly(sgais_stream(fit, res, block_size = 40, progress = FALSE)) # clears `res`
    DBI::dbDisconnect(con)
    expect_identical(from_db$log_evidence, same$log_evidence)
  }
  huge <- big
  huge$k[1] <- bit64::as.integer64("9007199254740993")
  expect_error(linear_regression(y ~ k + x2, data = huge, noise_sd = 1), "beyond 2\\^53",
               class = "sgais_error_column_type")
  # durations in any unit are seconds
  secs <- d
  secs$k <- as.difftime(d$k, units = "secs")
  mins <- d
  mins$k <- as.difftime(d$k / 60, units = "mins")
  expect_equal(exact_log_evidence(linear_regression(y ~ k + x2, prior = "paper", data = mins,
                                                    noise_sd = 1)),
               exact_log_evidence(plain), tolerance = 1e-9)
  expect_identical(exact_log_evidence(linear_regression(y ~ k + x2, prior = "paper", data = secs,
                                                        noise_sd = 1)),
                   exact_log_evidence(plain))
  # integer64 in the matrix interfaces too
  y <- data.frame(a = bit64::as.integer64(c(1, 2, 3, 10, 11, 12)), b = c(0.1, 0.2, 0.1, 5, 5.2, 4.9))
  expect_equal(gaussian_mixture(y, components = 2)$data$y, gaussian_mixture(
    data.frame(a = c(1, 2, 3, 10, 11, 12), b = y$b), components = 2)$data$y)
})

test_that("integer and logical columns are read as numbers in every constructor, also from a database", {
  d <- simulate_linear_regression(200, seed = 3)
  d$k <- as.integer(round(d$x1 * 10))
  d$flag <- d$x2 > 0
  d$b <- d$y > 0
  d$cnt <- as.integer(rpois(200, 2))
  d$cl <- factor(rep(c("a", "b", "c"), length.out = 200))
  dn <- d
  for (col in c("k", "flag", "b", "cnt")) dn[[col]] <- as.double(d[[col]])
  same_model <- function(a, b) {
    expect_equal(unclass(a)[c("data", "hyper", "n")], unclass(b)[c("data", "hyper", "n")])
  }
  expect_identical(exact_log_evidence(linear_regression(y ~ k + flag, prior = "paper", data = d,
                                                        noise_sd = 1)),
                   exact_log_evidence(linear_regression(y ~ k + flag, prior = "paper", data = dn,
                                                        noise_sd = 1)))
  same_model(robust_regression(y ~ k + flag, d), robust_regression(y ~ k + flag, dn))
  same_model(logistic_regression(b ~ k + flag, d), logistic_regression(b ~ k + flag, dn))
  same_model(poisson_regression(cnt ~ k + flag, d), poisson_regression(cnt ~ k + flag, dn))
  same_model(negative_binomial_regression(cnt ~ k + flag, d),
             negative_binomial_regression(cnt ~ k + flag, dn))
  same_model(softmax_regression(cl ~ k + flag, d), softmax_regression(cl ~ k + flag, dn))
  same_model(gaussian_mixture(d["k"], components = 2), gaussian_mixture(dn["k"], components = 2))
  # a Gaussian mixture of TRUE/FALSE is refused, with the column named
  expect_error(gaussian_mixture(d[c("k", "flag")], components = 2), "`flag`",
               class = "sgais_error_column_type")
  ll <- function(theta, data) {
    stats::dnorm(data[, "y"], theta[1] + theta[2] * data[, "flag"] + theta[3] * data[, "k"], 1,
                 log = TRUE)
  }
  same_model(suppressWarnings(custom_model(ll, data = d[c("y", "k", "flag")], dim = 3)),
             suppressWarnings(custom_model(ll, data = dn[c("y", "k", "flag")], dim = 3)))
  # a database stores TRUE/FALSE as 1/0: such rows continue a model built on a logical column
  skip_if_not_installed("RSQLite")
  fit <- sgais(linear_regression(y ~ k + flag, prior = "paper", data = d[1:100, ],
                                 noise_sd = 1), seed = 1,
               progress = FALSE)
  in_memory <- sgais(fit, d[101:200, ], progress = FALSE)
  con <- DBI::dbConnect(RSQLite::SQLite(), ":memory:")
  on.exit(DBI::dbDisconnect(con))
  DBI::dbWriteTable(con, "rows", d[101:200, c("y", "k", "flag")])
  res <- DBI::dbSendQuery(con, "SELECT * FROM rows")
  from_db <- sgais_stream(fit, res, block_size = 30, progress = FALSE)
  expect_identical(from_db$log_evidence, in_memory$log_evidence)
  coded <- d[101:200, ]
  coded$flag <- as.integer(coded$flag) + 1L # 1/2 is not TRUE/FALSE
  expect_error(sgais(fit, coded, progress = FALSE), "`flag`", class = "sgais_error_column_type")
})
