# The C API (inst/include/sgais.h, src/api.c) through its worked example, the package in
# inst/examples/sgaisexample, installed here into a temporary library.

# The library holding the installed sgais that the example links to (its headers), or "".
sgais_library <- function() {
  path <- find.package("sgais", lib.loc = .libPaths(), quiet = TRUE)
  path <- path[file.exists(file.path(path, "include", "sgais.h"))]
  if (length(path)) dirname(path[1]) else ""
}

install_example <- function() {
  skip_on_cran()
  lib <- sgais_library()
  if (!nzchar(lib)) skip("sgais is not installed with its C API header")
  source <- system.file("examples", "sgaisexample", package = "sgais")
  if (!nzchar(source)) skip("the example package is not in the installed sgais")
  # built from a copy: the installed package's files may be read-only and must stay clean
  copy <- tempfile("sgaisexample-src")
  dir.create(copy)
  file.copy(source, copy, recursive = TRUE)
  source <- file.path(copy, "sgaisexample")
  target <- tempfile("sgaisexample-lib")
  dir.create(target)
  libs <- paste(c(target, lib, .libPaths()), collapse = .Platform$path.sep)
  log <- system2(file.path(R.home("bin"), "R"),
                 c("CMD", "INSTALL", "--no-multiarch", "--no-test-load", "-l", shQuote(target),
                   shQuote(source)),
                 env = paste0("R_LIBS=", libs), stdout = TRUE, stderr = TRUE)
  if (!dir.exists(file.path(target, "sgaisexample"))) {
    fail(paste(c("installing the example failed:", log), collapse = "\n"))
  }
  list(lib = target, libs = libs)
}

test_that("a model compiled in C through the API equals the same model in R and built in", {
  ex <- install_example()
  withr::local_libpaths(ex$lib, action = "prefix")
  d <- simulate_linear_regression(500, seed = 7)
  x <- cbind(`(Intercept)` = 1, as.matrix(d[, 1:5]))
  compiled <- sgaisexample::example_linear_regression(x, d$y, noise_sd = 1)
  expect_s3_class(compiled, c("sgais_compiled_model", "sgais_model"))
  expect_output(print(compiled), "compiled model class \"sgaisexample_linear_regression\"")
  builtin <- linear_regression(y ~ ., prior = "paper", data = d, noise_sd = 1)
  in_r <- r_linear_regression(d)
  theta <- rnorm(6)
  expect_equal(sgais:::model_evaluate(compiled, theta), sgais:::model_evaluate(builtin, theta),
               tolerance = 1e-12)
  expect_equal(sgais:::model_evaluate(compiled, theta, 100L, 7L),
               sgais:::model_evaluate(in_r, theta, 100L, 7L), tolerance = 1e-12)
  expect_lt(max(check_gradients(compiled, seed = 1)$rel_error), 1e-8)
  # the same arithmetic as the built-in model, summed in another order (the built-in model keeps
  # its sums in registers and adds blocks of observations): the same fit up to rounding
  fit <- sgais(compiled, seed = 1, progress = FALSE)
  expect_equal(log_evidence(fit), log_evidence(sgais(builtin, seed = 1, progress = FALSE)),
               tolerance = 1e-10)
  expect_equal(log_evidence(paper_ais(compiled, seed = 2)), log_evidence(paper_ais(builtin, seed = 2)),
               tolerance = 1e-10)
  expect_equal(log_evidence(paper_ns(compiled, seed = 2)), log_evidence(paper_ns(builtin, seed = 2)),
               tolerance = 1e-10)

  # the class's own check, as a classed error
  expect_error(sgaisexample::example_linear_regression(x, d$y, noise_sd = -1),
               "the one hyperparameter is the noise sd", class = "sgais_error_input")
  expect_error(compiled_model("no_such_class", data = x, dim = 6), "is not registered",
               class = "sgais_error_model_class")
  expect_error(compiled_model("no_such_class", data = x, dim = 6, package = "no.such.package"),
               "is not installed", class = "sgais_error_model_class")

  # a fit survives saveRDS/readRDS into a new session: the class is found by name again
  path <- tempfile(fileext = ".rds")
  saveRDS(list(fit = fit, rows = cbind(x[1:50, ], y = d$y[1:50])), path)
  script <- tempfile(fileext = ".R")
  writeLines(c(
    sprintf("saved <- readRDS('%s')", normalizePath(path, winslash = "/")),
    "library(sgais)",
    "more <- sgais(saved$fit, new_data = saved$rows, progress = FALSE)",
    "cat(sprintf('%.17g', log_evidence(more)))"
  ), script)
  out <- system2(file.path(R.home("bin"), "Rscript"), shQuote(script),
                 env = paste0("R_LIBS=", ex$libs), stdout = TRUE, stderr = TRUE)
  here <- sgais(fit, new_data = cbind(x[1:50, ], y = d$y[1:50]), progress = FALSE)
  expect_equal(as.numeric(utils::tail(out, 1)), log_evidence(here), tolerance = 1e-15,
               info = paste(out, collapse = "\n"))
})
