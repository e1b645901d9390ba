# Classifies what the installed sgais does with the hostile-input table of
# tests/testthat/helper-hostile.R (issue 13): for each bad argument or corrupted object, a clear
# error (classed `sgais_error`, naming the argument or field), an unclear error, the documented
# warning, another warning, a result (silent), or a hang (over --limit seconds).
#
# Run from the package source directory (about 20 s):
#   Rscript inst/validation/hostile.R [--limit=30] [--out=file.txt] [--lib=DIR]
# It overwrites hostile.txt (or --out) with what it prints. --lib runs another installed version
# (e.g. an older one, for a before/after comparison) and then writes only to --out.
source(file.path("inst", "validation", "suite.R"))
limit <- as.numeric(opt("limit", 30))
lib <- opt("lib", "")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(sgais))
options(sgais.progress = FALSE)
source("tests/testthat/helper-hostile.R")
record_output(opt("out", if (nzchar(lib)) "" else file.path(validation_dir, "hostile.txt")))

env <- hostile_fixtures()
cases <- hostile_table()
started <- proc.time()[["elapsed"]]
rows <- lapply(seq_along(cases), function(i) {
  case <- cases[[i]]
  r <- hostile_outcome(case, env, limit)
  data.frame(case = i, expect = case$expect, outcome = r$kind,
             message = substr(gsub("\\s+", " ", r$message), 1, 200),
             call = substr(case$label, 1, 200), stringsAsFactors = FALSE)
})
res <- do.call(rbind, rows)
cat(sprintf("sgais %s: %d hostile cases in %.0f s (a hang: over %g s)\n",
            utils::packageVersion("sgais"), nrow(res), proc.time()[["elapsed"]] - started, limit))
print(table(expected = res$expect, outcome = res$outcome))
bad <- res[!(res$outcome == res$expect), ]
if (nrow(bad)) {
  cat(sprintf("\n%d cases not as expected:\n", nrow(bad)))
  for (i in seq_len(nrow(bad))) {
    cat(sprintf("[%d] %s\n     %s: %s\n", bad$case[i], bad$call[i], bad$outcome[i], bad$message[i]))
  }
}
