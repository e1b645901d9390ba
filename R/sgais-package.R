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
#' @section Options:
#' * `sgais.progress`: default of the `progress` argument (otherwise [interactive()]).
#'
#' @references Cameron, S. A., Eggers, H. C. and Kroon, S. (2019). Stochastic Gradient Annealed
#'   Importance Sampling for Efficient Online Marginal Likelihood Estimation. *Entropy* 21(11),
#'   1109. \doi{10.3390/e21111109}
#' @keywords internal
#' @aliases sgais-package
#' @useDynLib sgais, .registration = TRUE, .fixes = "C_"
#' @importFrom ggplot2 .data
"_PACKAGE"
