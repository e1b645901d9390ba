# The prior building blocks (src/prior.c) evaluated through a model with no data to speak of.
prior_model <- function(prior, dim = 1L) {
  custom_model(function(theta, data) rep(0, nrow(data)),
               function(theta, data) numeric(length(theta)),
               data = data.frame(x = 0), dim = dim, prior = prior)
}
log_prior <- function(model, theta) sgais:::model_evaluate(model, theta)$log_prior

test_that("each block is a normalised density with the right gradient", {
  priors <- list(normal_prior(1, 2), student_t_prior(3, -1, 0.5), half_normal_prior(2),
                 exponential_prior(0.5), log_normal_prior(0.3, 0.7))
  for (prior in priors) {
    m <- prior_model(prior)
    f <- Vectorize(function(t) exp(log_prior(m, t)))
    expect_equal(integrate(f, -Inf, Inf, rel.tol = 1e-10)$value, 1, tolerance = 1e-7)
    for (t in c(-2.3, 0.1, 1.7)) {
      h <- 1e-5
      fd <- (log_prior(m, t + h) - log_prior(m, t - h)) / (2 * h)
      expect_equal(sgais:::model_evaluate(m, t)$grad_log_prior, fd, tolerance = 1e-7)
    }
  }
})

test_that("blocks on the log scale are the named densities of sigma with the Jacobian", {
  t <- c(-0.7, 0.4)
  s <- exp(t)
  expect_equal(log_prior(prior_model(half_normal_prior(2), 2), t),
               sum(log(2) + dnorm(s, 0, 2, log = TRUE) + t))
  expect_equal(log_prior(prior_model(exponential_prior(3), 2), t),
               sum(dexp(s, 3, log = TRUE) + t))
  expect_equal(log_prior(prior_model(log_normal_prior(0.2, 1.5), 2), t),
               sum(dlnorm(s, 0.2, 1.5, log = TRUE) + t))
  expect_equal(log_prior(prior_model(student_t_prior(4, 1, 2), 2), t),
               sum(dt((t - 1) / 2, 4, log = TRUE) - log(2)))
})

test_that("draws follow the blocks (Kolmogorov-Smirnov at fixed seeds)", {
  draws <- function(prior) drop(withr::with_seed(1, sgais:::model_prior_draw(prior_model(prior), 4000)))
  expect_gt(ks.test(draws(normal_prior(1, 2)), "pnorm", 1, 2)$p.value, 1e-3)
  expect_gt(ks.test((draws(student_t_prior(3, -1, 0.5)) + 1) / 0.5, "pt", 3)$p.value, 1e-3)
  expect_gt(ks.test(exp(draws(half_normal_prior(2))) / 2, function(q) 2 * pnorm(q) - 1)$p.value,
            1e-3)
  expect_gt(ks.test(exp(draws(exponential_prior(0.5))), "pexp", 0.5)$p.value, 1e-3)
})

test_that("blocks join with c() in the order of the parameters", {
  prior <- c(normal_prior(sd = 10, dim = 2), half_normal_prior(1))
  expect_s3_class(prior, "sgais_prior")
  expect_output(print(prior), "2: N\\(0, sd = 10\\)")
  expect_output(print(prior), "rest: exp\\(theta\\) ~ half-N")
  m <- prior_model(prior, 4)
  t <- c(1, -2, 0.5, -0.1)
  expect_equal(log_prior(m, t), sum(dnorm(t[1:2], 0, 10, log = TRUE)) +
                 sum(log(2) + dnorm(exp(t[3:4]), 0, 1, log = TRUE) + t[3:4]))
  expect_match(m$details[["prior"]], "theta1, theta2: N\\(0, sd = 10\\); theta3, theta4: exp")
})

test_that("priors check their arguments and their fit to the model", {
  expect_error(normal_prior(sd = -1), "`sd` must be", class = "sgais_error")
  expect_error(normal_prior(mean = Inf), "`mean` must be a finite number", class = "sgais_error")
  expect_error(student_t_prior(df = 0), "`df`", class = "sgais_error")
  expect_error(half_normal_prior(dim = 0), "`dim`", class = "sgais_error")
  expect_error(c(normal_prior(), 1), "Only priors", class = "sgais_error")
  expect_error(prior_model(c(normal_prior(), normal_prior()), 2), "At most one block",
               class = "sgais_error")
  expect_error(prior_model(normal_prior(dim = 2), 3), "covers 2 parameters, but the model has 3",
               class = "sgais_error")
  expect_error(prior_model(c(normal_prior(dim = 3), normal_prior()), 3), "covers more",
               class = "sgais_error")
  # C re-checks a corrupted description (sg_prior_check)
  m <- prior_model(normal_prior())
  m$hyper$prior[5, 1] <- -1
  expect_error(sgais:::model_evaluate(m, 0), "invalid location, scale or df",
               class = "sgais_error_input")
  m$hyper$prior <- "nonsense"
  expect_error(sgais:::model_evaluate(m, 0), "not a prior description")
})
