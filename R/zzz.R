# What happens when the package is loaded.

.onLoad <- function(libname, pkgname) {
  threads_init()
}
