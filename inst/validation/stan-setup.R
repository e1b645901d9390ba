# What the Stan + bridgesampling reference scripts share, sourced once they know `here` (their
# folder): rstan and bridgesampling (development references, never dependencies: apt-get install
# r-cran-rstan r-cran-bridgesampling), compiled models cached beside the Stan programs, two
# cores, and the system's Boost headers when the BH package is not installed (Debian's rstan).
suppressMessages({
  library(rstan)
  library(bridgesampling)
})
rstan_options(auto_write = TRUE)
options(mc.cores = 2)
if (!nzchar(system.file("include", "boost", package = "BH")) && dir.exists("/usr/include/boost"))
  rstan_options(boost_lib = "/usr/include")

# say(): a line printed and kept in `stan_log`, which each script writes to its summary file;
# stan_versions(): "rstan x, bridgesampling y, <date and time>", for its first line.
stan_log <- character()
say <- function(...) {
  line <- sprintf(...)
  cat(line, "\n", sep = "")
  stan_log <<- c(stan_log, line)
}
stan_versions <- function() {
  sprintf("rstan %s, bridgesampling %s, %s", utils::packageVersion("rstan"),
          utils::packageVersion("bridgesampling"), format(Sys.time(), "%F %H:%M"))
}
