# What the scripts of the validation suite share; each sources this file first, from the
# package's root (run.R's header lists the suite).
#   opt(name, default)   the value of --name=value on the command line, or `default`
#   validation_dir       where the suite's references and result files are
#   write_rows(rows, file, key)  writes a CSV result file: the rows of `file` whose `key` columns
#                        match one of `rows` are replaced, the others kept, so that a run of a part
#                        (a seed, some cases) updates its share of the current result
#   record_output(file)  from here on, what the script prints goes to `file` (overwritten) as well;
#                        nothing when `file` is ""
validation_dir <- file.path("inst", "validation")
if (!file.exists(file.path(validation_dir, "suite.R"))) {
  stop("run from the package's root (inst/validation/suite.R not found)", call. = FALSE)
}

opt <- function(name, default) {
  hit <- grep(sprintf("^--%s=", name), commandArgs(TRUE), value = TRUE)
  if (length(hit)) sub(sprintf("^--%s=", name), "", hit[length(hit)]) else default
}

write_rows <- function(rows, file, key) {
  if (file.exists(file)) {
    old <- utils::read.csv(file, stringsAsFactors = FALSE)
    if (all(c(key, names(rows)) %in% names(old))) {
      mine <- do.call(paste, c(rows[key], sep = "\r"))
      rows <- rbind(old[!do.call(paste, c(old[key], sep = "\r")) %in% mine, names(rows)], rows)
    }
  }
  utils::write.csv(rows, file, row.names = FALSE)
  invisible(rows)
}

record_output <- function(file) {
  if (nzchar(file)) sink(file, split = TRUE)
  invisible(file)
}
