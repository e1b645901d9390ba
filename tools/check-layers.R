# Checks the layering of the package's C code and prints a short report.
#
# The C code in src/ is in two layers:
#   - a core in plain C that never reads or builds R objects (SEXPs): samplers, models, kernels,
#     weights, threads. It may use a small part of R's C API that has nothing to do with R
#     objects (R_alloc, the NA/NaN/Inf constants, Rprintf, Rmath, R's RNG).
#   - glue files that unpack R objects, call the core and build the results: ffi.c, ffi.h,
#     init.c, api.c, custom_model.c and every file named *_r.c. Glue may do anything.
# The check keeps the core free of R objects (so it can be tested, reused and reasoned about
# without R's object model) and keeps the graph of object files free of cycles (so the layers
# stay layers: glue -> core, never core -> glue or core <-> core loops).
#
# Rules:
#   1. Includes: a core .c or .h file must not include "ffi.h", any glue header, nor any R
#      header except <R_ext/Arith.h>, <R_ext/Memory.h>, <Rmath.h>, <R_ext/Print.h> and
#      <R_ext/Utils.h>; base.c and threads.c (the two core files that talk to R's runtime:
#      memory, interrupts) may also include <R.h>, <Rinternals.h> and <Rinterface.h>.
#   2. Symbols (from `nm` on the objects of a scratch build made with `R CMD SHLIB`):
#      a. a core object must not reference a symbol defined in a glue object;
#      b. a core object must not reference R's object API (only the allowed symbols below;
#         base.o and threads.o may also use R's interrupt functions);
#      c. the graph object -> objects defining the symbols it references has no cycle
#         (no strongly connected component of more than one object).
#
# Usage, from the package root:  Rscript tools/check-layers.R [src-dir]   (default "src")
# The sources are copied (src/*.c, src/*.h, src/Makevars and ../inst/include) to a temporary
# directory and built there, so src/ itself is never touched.
# Exit status: 0 if the layers are clean, 1 on any violation, 2 if the check itself cannot run
# (no such directory, the scratch build fails, `nm` is missing).
# Base R only, plus the system tools `nm` and `R CMD SHLIB`.

# ---- configuration ---------------------------------------------------------------------------

# Glue files by name, plus every file whose name ends in "_r.c"; every other .c/.h is core.
glue_names <- c("ffi.c", "ffi.h", "init.c", "api.c", "custom_model.c")
glue_pattern <- "_r\\.c$"

# R headers a core file may include, and the extra ones base.c and threads.c may include.
core_r_headers <- c("R_ext/Arith.h", "R_ext/Memory.h", "Rmath.h", "R_ext/Print.h",
                    "R_ext/Utils.h")
runtime_files <- c("base.c", "threads.c")
runtime_r_headers <- c("R.h", "Rinternals.h", "Rinterface.h")

# Symbols treated as R's C API (matched against external symbols a core object references).
r_symbol_pattern <- paste0(
  "^(Rf_|R_|SET_|SETCAR|VECTOR_ELT|STRING_ELT|REAL$|INTEGER$|LOGICAL$|RAW$|COMPLEX$|",
  "LENGTH$|XLENGTH$|TYPEOF$|ATTRIB$|CAR$|CDR$|CHAR$|DATAPTR|.*_ELT$|Rprintf|REprintf|ISNAN)")

# Of those, the ones any core object may use: memory, NA/NaN/Inf, printing, Rmath, R's RNG.
core_r_symbols <- c(
  "R_alloc", "R_finite", "R_IsNA", "R_IsNaN", "R_NaReal", "R_NaN", "R_NaInt", "R_PosInf",
  "R_NegInf", "Rprintf", "REprintf",
  "Rf_lgammafn", "Rf_gammafn", "Rf_digamma", "Rf_trigamma", "Rf_lbeta", "Rf_beta", "Rf_pt",
  "Rf_qt", "Rf_rt", "Rf_rgamma", "Rf_rnorm", "Rf_runif", "Rf_rbeta", "Rf_pnorm5", "Rf_qnorm5",
  "Rf_dnorm4", "Rf_dt", "Rf_pgamma", "Rf_qgamma", "Rf_dgamma", "Rf_log1pmx", "Rf_lgamma1p",
  "Rf_choose", "Rf_lchoose", "Rf_pbeta", "Rf_qbeta", "Rf_fmax2", "Rf_fmin2", "Rf_imax2",
  "Rf_imin2", "Rf_sign", "Rf_fsign",
  "unif_rand", "norm_rand", "exp_rand", "GetRNGstate", "PutRNGstate")
# ... and the ones base.o and threads.o may use in addition (interrupts).
runtime_r_symbols <- c("R_CheckUserInterrupt", "Rf_onintr")

# nm types of global definitions: text, data, bss, read-only data, common; plus small
# data/bss (G, S: some ABIs) and weak definitions (V, W).
defined_types <- c("T", "D", "B", "R", "C", "G", "S", "V", "W")

# ---- helpers ---------------------------------------------------------------------------------

# Stops the check (exit status 2): the check could not run, which is not a verdict.
give_up <- function(...) {
  cat("check-layers: ", ..., "\n", sep = "", file = stderr())
  quit(save = "no", status = 2)
}

is_glue <- function(file) basename(file) %in% glue_names | grepl(glue_pattern, basename(file))

# The #include lines of a file: a data frame of file, line number, delimiter ("<" or "\"")
# and header name. Lines inside block comments rarely start with '#', so a regex suffices.
read_includes <- function(path) {
  lines <- readLines(path, warn = FALSE)
  re <- "^[[:space:]]*#[[:space:]]*include[[:space:]]*([<\"])([^>\"]+)[>\"].*$"
  hit <- grep(re, lines)
  data.frame(file = rep(basename(path), length(hit)), line = hit,
             delim = sub(re, "\\1", lines[hit]), header = sub(re, "\\2", lines[hit]),
             stringsAsFactors = FALSE)
}

# The headers R installs (e.g. "R.h", "R_ext/Arith.h"), with a name-based fallback.
r_header_names <- list.files(R.home("include"), pattern = "\\.h$", recursive = TRUE)
is_r_header <- function(header) {
  header %in% r_header_names | grepl("^(R_ext/.*|R[A-Za-z_]*\\.h|S\\.h)$", header)
}

# The global symbols of an object file, via `nm -P` (POSIX format: "name type value size").
# Returns list(defined = <names>, undefined = <names>).
read_symbols <- function(object) {
  out <- suppressWarnings(system2("nm", c("-P", shQuote(object)), stdout = TRUE, stderr = TRUE))
  status <- attr(out, "status")
  if (!is.null(status) && status != 0) {
    give_up("nm failed on ", object, ": ", paste(out, collapse = " "))
  }
  fields <- strsplit(trimws(out), "[[:space:]]+")
  fields <- fields[lengths(fields) >= 2]
  name <- vapply(fields, `[`, "", 1)
  type <- vapply(fields, `[`, "", 2)
  if (Sys.info()[["sysname"]] == "Darwin") name <- sub("^_", "", name)  # Mach-O prefix
  list(defined = unique(name[type %in% defined_types]), undefined = unique(name[type == "U"]))
}

# Strongly connected components of a directed graph given as a logical adjacency matrix
# (dimnames = node names): the transitive closure by repeated squaring, then the classes of
# mutually reachable nodes. The graph is a few dozen nodes, so the matrix way is plenty.
strong_components <- function(adj) {
  n <- nrow(adj)
  reach <- adj | (diag(n) > 0)  # every node reaches itself
  repeat {
    nxt <- (reach %*% reach) > 0
    if (all(nxt == reach)) break
    reach <- nxt
  }
  mutual <- reach & t(reach)
  comps <- unique(lapply(seq_len(n), function(i) rownames(adj)[mutual[i, ]]))
  comps[order(-lengths(comps))]
}

# ---- inputs ----------------------------------------------------------------------------------

started <- proc.time()[["elapsed"]]
args <- commandArgs(trailingOnly = TRUE)
src_dir <- if (length(args)) args[[1]] else "src"
if (!dir.exists(src_dir)) give_up("no such directory: ", src_dir)
src_dir <- normalizePath(src_dir)
if (!nzchar(Sys.which("nm"))) give_up("`nm` not found on the PATH")

c_files <- sort(list.files(src_dir, pattern = "\\.c$", full.names = TRUE))
h_files <- sort(list.files(src_dir, pattern = "\\.h$", full.names = TRUE))
if (!length(c_files)) give_up("no .c files in ", src_dir)
violations <- character(0)
kinds <- character(0)  # one per violation: "include", "glue", "R API", "cycle"
add <- function(kind, text) {
  violations <<- c(violations, text)
  kinds <<- c(kinds, kind)
}

# ---- rule 1: includes of core files ----------------------------------------------------------

glue_headers <- basename(h_files[is_glue(h_files)])
core_sources <- c(c_files, h_files)
core_sources <- core_sources[!is_glue(core_sources)]
for (path in core_sources) {
  inc <- read_includes(path)
  for (i in seq_len(nrow(inc))) {
    h <- inc$header[i]
    shown <- if (inc$delim[i] == "<") paste0("<", h, ">") else paste0("\"", h, "\"")
    where <- paste0(inc$file[i], ":", inc$line[i])
    if (basename(h) %in% c("ffi.h", glue_headers)) {
      add("include", sprintf("%s includes %s (glue header)", where, shown))
    } else if (is_r_header(h)) {
      allowed <- c(core_r_headers, if (inc$file[i] %in% runtime_files) runtime_r_headers)
      if (!h %in% allowed) add("include", sprintf("%s includes %s (R header)", where, shown))
    }
  }
}

# ---- scratch build ---------------------------------------------------------------------------

build_root <- tempfile("check-layers-")
build_dir <- file.path(build_root, "src")
dir.create(build_dir, recursive = TRUE)
to_copy <- c(c_files, h_files, file.path(src_dir, "Makevars"))
invisible(file.copy(to_copy[file.exists(to_copy)], build_dir))
inst_include <- file.path(dirname(src_dir), "inst", "include")
if (dir.exists(inst_include)) {
  dir.create(file.path(build_root, "inst"))
  invisible(file.copy(inst_include, file.path(build_root, "inst"), recursive = TRUE))
}

# Compile in parallel unless the caller set make's flags.
if (!nzchar(Sys.getenv("MAKEFLAGS"))) {
  Sys.setenv(MAKEFLAGS = paste0("-j", max(1L, parallel::detectCores(), na.rm = TRUE)))
}
old_wd <- setwd(build_dir)
build_log <- suppressWarnings(system2(
  file.path(R.home("bin"), "R"), c("CMD", "SHLIB", "-o", "check.so", basename(c_files)),
  stdout = TRUE, stderr = TRUE))
setwd(old_wd)
build_status <- attr(build_log, "status")
if (!is.null(build_status) && build_status != 0) {
  # Show the compiler's diagnostics (or the end of the log), and what rule 1 found so far.
  errors <- grep("error:|Error [0-9]|undefined reference|cannot find|No rule", build_log,
                 value = TRUE)
  writeLines(head(if (length(errors)) errors else tail(build_log, 20), 20), con = stderr())
  writeLines(violations)
  give_up("the scratch build (R CMD SHLIB) of ", src_dir, " failed (errors above), so only ",
          "the includes were checked: ", length(violations), " include violation(s)")
}

# ---- rule 2: symbols -------------------------------------------------------------------------

objects <- sub("\\.c$", ".o", basename(c_files))
missing <- objects[!file.exists(file.path(build_dir, objects))]
if (length(missing)) give_up("the scratch build made no ", paste(missing, collapse = ", "))
symbols <- lapply(file.path(build_dir, objects), read_symbols)
names(symbols) <- objects
unlink(build_root, recursive = TRUE)  # (R also removes its tempdir() on exit)
glue_objects <- objects[is_glue(sub("\\.o$", ".c", objects))]
core_objects <- setdiff(objects, glue_objects)

# Which object defines each global symbol (the first one, should two define it).
definer <- unlist(lapply(objects, function(o) setNames(rep(o, length(symbols[[o]]$defined)),
                                                       symbols[[o]]$defined)))
definer <- definer[!duplicated(names(definer))]

adj <- matrix(FALSE, length(objects), length(objects), dimnames = list(objects, objects))
for (o in objects) {
  used <- symbols[[o]]$undefined
  internal <- used[used %in% names(definer)]
  targets <- unique(definer[internal])
  adj[o, setdiff(targets, o)] <- TRUE
  if (!o %in% core_objects) next

  # 2a: core -> glue edges, one line per symbol.
  to_glue <- internal[definer[internal] %in% glue_objects]
  for (s in sort(to_glue)) {
    add("glue", sprintf("%s uses glue symbol %s (defined in %s)", o, s, definer[[s]]))
  }

  # 2b: R's object API among the symbols defined outside the package.
  external <- setdiff(used, internal)
  allowed <- c(core_r_symbols, if (sub("\\.o$", ".c", o) %in% runtime_files) runtime_r_symbols)
  bad <- external[grepl(r_symbol_pattern, external) & !external %in% allowed]
  for (s in sort(bad)) add("R API", sprintf("%s uses R API %s", o, s))
}

# 2c: cycles.
comps <- strong_components(adj)
for (comp in comps[lengths(comps) > 1]) {
  add("cycle", sprintf("cycle of %d objects: %s", length(comp), paste(sort(comp), collapse = " ")))
}

# ---- report ----------------------------------------------------------------------------------

cat(sprintf("check-layers: %s: %d core and %d glue objects, %d edges, largest SCC %d (%.1fs)\n",
            src_dir, length(core_objects), length(glue_objects), sum(adj),
            max(lengths(comps)), proc.time()[["elapsed"]] - started))
if (!length(violations)) {
  cat("layers: OK\n")
  quit(save = "no", status = 0)
}
order_kinds <- c("include", "glue", "R API", "cycle")
for (k in order_kinds) writeLines(violations[kinds == k])
counts <- table(factor(kinds, levels = order_kinds))
counts <- counts[counts > 0]
cat(sprintf("layers: %d violations (%s)\n", length(violations),
            paste(sprintf("%s %d", names(counts), counts), collapse = ", ")))
quit(save = "no", status = 1)
