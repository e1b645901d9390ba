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
# One test per function the cases call (a test per case would cost more than the cases); a
# failure names its case. hostile_outcome() is the classification that script prints.
fast <- Filter(function(case) !isTRUE(case$slow), cases)
called <- vapply(fast, function(case) deparse(case$expr[[1]])[1], "")
for (fn in unique(called)) {
  test_that(paste0("hostile: ", fn, "() refuses bad input clearly, and takes hard data"), {
    test_tags("sanitize")
    for (case in fast[called == fn]) {
      outcome <- hostile_outcome(case, env)
      expect(outcome$kind == case$expect,
             sprintf("%s\nexpected: %s (%s, /%s/)\ngot: %s: %s", case$label, case$expect,
                     case$class, case$pattern, outcome$kind, outcome$message))
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
