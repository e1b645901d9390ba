# The hostile-input table (helper-hostile.R): every bad argument or corrupted object gives a
# classed error naming it, or the documented warning; hard but well-posed data give a right
# result. inst/validation/hostile.R prints the same table's classification.

env <- hostile_fixtures()
cases <- hostile_table()

test_that("the table covers every exported function with at least 300 cases", {
  expect_gte(length(cases), 300)
  called <- unique(unlist(lapply(cases, function(case) all.names(case$expr))))
  exported <- getNamespaceExports("sgais")
  untested <- setdiff(exported, called)
  expect_equal(untested, character(0))
})

# The slow cases (seconds each) are run by inst/validation/hostile.R, in `make validate-quick`.
for (case in Filter(function(case) !isTRUE(case$slow), cases)) {
  test_that(paste("hostile:", case$label), {
    test_tags("sanitize")
    if (case$expect == "error") {
      err <- expect_error(suppressWarnings(eval(case$expr, env)), class = case$class)
      expect_s3_class(err, "sgais_error")
      expect_match(conditionMessage(err), case$pattern)
    } else if (case$expect == "warning") {
      # the fit inside may warn too (unreliable estimate): only the case's warning is asserted
      expect_warning(
        withCallingHandlers(eval(case$expr, env), sgais_warning = function(w) {
          if (!inherits(w, case$class)) invokeRestart("muffleWarning")
        }),
        case$pattern, class = case$class
      )
    } else {
      fit <- withCallingHandlers(eval(case$expr, env),
                                 sgais_warning = function(w) invokeRestart("muffleWarning"))
      expect_lt(abs(log_evidence(fit) - eval(case$reference, env)), case$tolerance)
    }
  })
}

test_that("the harness itself tells a clear error from an unclear one and a silent result", {
  clear <- hostile_case(sgais(m, particles = -1), "`particles`")
  unclear <- hostile_case(sgais(m, particles = -1), "`nonsense`")
  silent <- hostile_case(log_evidence(f_sg), "anything")
  expect_equal(hostile_outcome(clear, env)$kind, "error")
  expect_equal(hostile_outcome(unclear, env)$kind, "unclear error")
  expect_equal(hostile_outcome(silent, env)$kind, "result")
})
