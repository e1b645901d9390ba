#' sgais: Evidence for Models on Large and Streaming Data
#'
#' Estimates the Bayesian evidence (marginal likelihood) of models by stochastic gradient
#' annealed importance sampling (SGAIS; Cameron, Eggers and Kroon, Entropy 2019), which processes
#' the data chunk by chunk and so returns the log evidence of every prefix of the data in one
#' pass. The reference methods [ais()] (annealed importance sampling on the full data) and
#' [nested_sampling()] run on the same models and SGHMC kernel and return the same kind of
#' result, so their estimates and costs compare. The samplers are written in C; models are built
#' by R functions such as [linear_regression()].
#'
#' @section Which estimator when:
#' [compare_models()] picks by this list with `method = "auto"`, and [model_search()] for the
#' submodels of a regression; a single fit follows it too.
#' \describe{
#'   \item{Linear regression with normal, g- or Zellner-Siow priors, random intercepts too:}{
#'     [exact_evidence()], the closed form.}
#'   \item{Few parameters, a posterior near a Gaussian (GLMs, random intercepts), the data at
#'     hand:}{[importance_sampling()], when its Pareto \eqn{\hat k}{k-hat} is at most 0.7.}
#'   \item{Data arriving over time; the evidence of every prefix; many rows; a stream or a
#'     database:}{[sgais()], continued by `sgais(fit, new_data)` or [sgais_stream()].}
#'   \item{Multimodal posteriors (mixtures):}{[sgais()] (its reference and restarts), checked
#'     by [ais()] or [nested_sampling()].}
#'   \item{A reference for any of these:}{[ais()] or [nested_sampling()], with replicates.}
#'   \item{The thesis's other online estimators, for study:}{[sir()], [sequential_sgmcmc()],
#'     [online_nested_sampling()].}
#' }
#'
#' @section Options:
#' * `sgais.progress`: default of the `progress` argument (otherwise [interactive()]).
#' * `sgais.colours`: the colours of the plots (see [sgais_plots]).
#' * `sgais.threads`: default number of threads ([sgais_threads()]).
#' * `sgais.max_memory`: the most memory (bytes, 8 GiB by default) a request may need before it
#'   is refused up front with `sgais_error_too_large` (replicates x particles x parameters,
#'   posterior draws).
#' * `sgais.max_work`: the most work (1e12 by default) a run may be predicted to need before it
#'   is refused up front with `sgais_error_too_large`, counted as evaluations of one
#'   observation's log-likelihood or gradient at one point (the unit of a fit's
#'   `likelihood_evaluations`). The prediction is a lower bound from every setting that
#'   multiplies the work (replicates, particles or live points, steps per move, walk steps,
#'   mini-batch, observations, draws), so a run that passes can still take longer.
#' * `sgais.long_run`: with progress bars, replicates predicted (from the pilot run's time) to
#'   take longer than this many seconds (60 by default) say so at once, in a message of class
#'   `sgais_message_long_run`.
#'
#' @section Errors and warnings:
#' Every error the package raises has class `sgais_error` (then `error`, `condition`), and all
#' but plain argument errors a more specific class before it, so that scripts can catch one
#' kind with `tryCatch(..., sgais_error_annealing = function(e) ...)`. The message names the
#' argument or field at fault.
#' * Arguments and objects: `sgais_error_argument` (misspelled, repeated or stray arguments,
#'   some arguments of the plots and of [detect_shifts()]), `sgais_error_input` (an argument or
#'   object the C core cannot use), `sgais_error_too_large` (a request whose memory, work or
#'   length is refused before any work), `sgais_error_family` (`family =` given to a regression
#'   constructor), `sgais_error_weights` (weights or trials that are not whole numbers >= 0),
#'   `sgais_error_checkpoint` (a checkpoint path that is the data read, or cannot be written),
#'   `sgais_error_not_continuable` (`update()` of a fit that cannot continue),
#'   `sgais_error_not_sgais` (a function reading SGAIS's trajectories given other fits),
#'   `sgais_error_no_closed_form` (a closed form asked of a model without one),
#'   `sgais_error_model_class` (a [compiled_model()] class that is not registered),
#'   `sgais_error_corrupt` (a damaged [detect_shifts()] result), `sgais_error_invalid_model` and `sgais_error_invalid_fit` (a damaged or hand-edited
#'   model or fit; the field is named), `sgais_error_invalid_state` (a fit's state cannot be
#'   continued), `sgais_error_rows_dropped` (a model from a bounded reservoir used where all
#'   rows are needed).
#' * Code: `sgais_error_formula_function` (a formula, or the stored terms of a saved fit, calling
#'   a function outside the transformations a formula may use), `sgais_error_untrusted_functions`
#'   (the R functions of a [custom_model()] fit read from a file; see [reattach_functions()]),
#'   `sgais_error_model_random` (a [custom_model()] whose functions use random numbers).
#' * Data: `sgais_error_non_finite` (NA, NaN or Inf), `sgais_error_extreme_values` (values beyond
#'   \eqn{10^{100}} in size), `sgais_error_response` (a response the model cannot take, e.g. a
#'   matrix, or binomial counts that are not whole), `sgais_error_offset` (an offset() term in a
#'   model without one),
#'   `sgais_error_data_mismatch` and its subclasses `sgais_error_missing_column`,
#'   `sgais_error_extra_column`, `sgais_error_column_type`, `sgais_error_column_count`,
#'   `sgais_error_unseen_level`, `sgais_error_unseen_class`, `sgais_error_not_row_by_row` and
#'   `sgais_error_design_columns` (new rows that do not fit a model), `sgais_error_stream` (a
#'   stream source failed).
#' * Computation: `sgais_error_model` (a model's own function failed or returned nonsense),
#'   `sgais_error_likelihood` (NaN, +Inf or zero likelihood), `sgais_error_divergence` (the
#'   sampler's moves broke down), `sgais_error_annealing` (annealing did not finish),
#'   `sgais_error_prior_conflict` (data too far outside what the prior allows to anneal to),
#'   `sgais_error_numerical` (a result that cannot be right: not finite, or outside the range
#'   the method's own points allow), `sgais_error_ill_conditioned` (a regression whose posterior
#'   precision is not numerically positive definite).
#'
#' Warnings have class `sgais_warning` and one of: `sgais_warning_unreliable` (the diagnostics
#' predict a large error, replicates disagree, or the moves were almost all rejected),
#' `sgais_warning_small_steps` (steps too small to move the particles),
#' `sgais_warning_degenerate_state` (a fit continued from weights of effective sample size
#' below 2), `sgais_warning_audit` ([audit_evidence()]: the online and shuffled estimates
#' disagree), `sgais_warning_interrupted` (a run stopped by an interrupt returns what it did),
#' `sgais_warning_low_ess` ([posterior_samples()] from few effective points),
#' `sgais_warning_close_call` and `sgais_warning_autoscale_rows` (a comparison decided within
#' its uncertainty; a default prior scaled on few rows), `sgais_warning_numerical_gradient`
#' ([custom_model()] without a gradient), `sgais_warning_threads` and `sgais_warning_no_openmp`
#' ([sgais_threads()]).
#'
#' `setTimeLimit()` and interrupts (Ctrl-C) stop every estimator within about 0.1 s of work, as
#' R's own error or interrupt; an interrupted SGAIS run returns the fit of its last whole chunk.
#'
#' @references Cameron, S. A., Eggers, H. C. and Kroon, S. (2019). Stochastic Gradient Annealed
#'   Importance Sampling for Efficient Online Marginal Likelihood Estimation. *Entropy* 21(11),
#'   1109. \doi{10.3390/e21111109}
#' @keywords internal
#' @aliases sgais-package
#' @useDynLib sgais, .registration = TRUE, .fixes = "C_"
#' @importFrom ggplot2 .data
"_PACKAGE"
