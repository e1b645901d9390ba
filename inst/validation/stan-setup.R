# What the Stan + bridgesampling reference scripts share, sourced first from the package's root:
# the suite's shared code (suite.R), rstan and bridgesampling (development references, never
# dependencies: apt-get install r-cran-rstan r-cran-bridgesampling), compiled models cached
# (rstan's auto_write), two cores, and the system's Boost headers when the BH package is not
# installed (Debian's rstan).
source(file.path("inst", "validation", "suite.R"))
suppressMessages({
  library(rstan)
  library(bridgesampling)
})
rstan_options(auto_write = TRUE)
options(mc.cores = 2)
if (!nzchar(system.file("include", "boost", package = "BH")) && dir.exists("/usr/include/boost"))
  rstan_options(boost_lib = "/usr/include")

# say(): one line of the summary, printed; stan_versions(): "rstan x, bridgesampling y, <date and
# time>", for its first line.
say <- function(...) cat(sprintf(...), "\n", sep = "")
stan_versions <- function() {
  sprintf("rstan %s, bridgesampling %s, %s", utils::packageVersion("rstan"),
          utils::packageVersion("bridgesampling"), format(Sys.time(), "%F %H:%M"))
}
