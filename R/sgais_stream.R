#' SGAIS on a stream of data: from memory, a CSV file, a database query or a function
#'
#' Runs [sgais()] over data that arrive in blocks and need never be in memory at once as a data
#' frame: each block is turned into the model's design by its specification and added to the fit
#' with `sgais(fit, block)` (see "Continuing a fit on new data" in [sgais()]). Because chunks end
#' at fixed multiples of `chunk_size` whatever the blocks are, the result is exactly that of
#' `sgais()` on all the rows at once with the same seed, for every source and `block_size`.
#'
#' The fit keeps every row it has seen (the mini-batches are drawn from all earlier rows), so
#' memory grows with the stream, unless `reservoir_size` (a setting, see [sgais_control()]) bounds
#' it: the fit then keeps a uniform sample of that many earlier rows per replicate (see "A
#' bounded reservoir" in [sgais()] for what it costs in accuracy).
#'
#' @section Interrupts, errors and checkpoints:
#' Nothing computed is lost when a stream stops early. On an interrupt (Ctrl-C / Esc) the fit so
#' far is returned, with a warning of class `sgais_warning_interrupted` that says how many
#' observations it holds: with one replicate, the fit up to the last whole chunk done, even inside
#' a block (see "Interrupts" in [sgais()]); with several, the fit of the blocks added so far. When
#' the source (or the data it returns) raises an error, the error is re-raised with class
#' `sgais_error_stream` and the fit so far in its field `fit`:
#' `tryCatch(sgais_stream(...), sgais_error_stream = function(e) e$fit)`. Either fit continues
#' with `sgais(fit, more_rows)` or another `sgais_stream(fit, ...)` on the rest of the data.
#' With `checkpoint = "file.rds"` the fit is also written there at the end of a block whenever
#' `checkpoint_every` seconds have passed since the last write, and at the end; the file is
#' written to a temporary name and renamed, so it always holds a whole fit, which `readRDS()`
#' returns ready to continue.
#'
#' @section Reading a CSV file:
#' A file is read once, in order, a block at a time: by [data.table::fread()] on the block's
#' lines when the data.table package is installed, else by [utils::read.csv()] (also with
#' `options(sgais.csv_reader = "read.csv")`). The first block fixes the type of each column: a
#' column of labels that happen to be digits stays labels; but numbers are numbers whatever the
#' first block held (whole numbers there, decimals later), and a column empty there is read as
#' it comes. A value that is not a number in a column of numbers is an error of class
#' `sgais_error_column_type`, and a line of another number of fields than the header one of
#' class `sgais_error_csv_line` (with `read.csv()`, the lines of its block), each naming the
#' line in its message and its field `line`, as the parent of the `sgais_error_stream`. The two
#' parsers may read a decimal number of more than 15 significant digits to doubles a bit apart,
#' and `fread()` does not take fields that hold line breaks.
#'
#' @section Reading a Parquet file:
#' sgais has no Parquet reader of its own. A file whose rows fit in memory is read whole first:
#' `sgais_stream(model, nanoparquet::read_parquet("data.parquet"))`. To read one a block at a
#' time, give the `DBIResult` of a query on a database that reads Parquet files, or a function
#' that returns the next rows from a reader of row groups.
#'
#' @param model A model built on a first block of the data (its specification and prior are
#'   used, not its rows: e.g. `linear_regression(y ~ ., data[1:1000, ])`), or a fit from [sgais()]
#'   or `sgais_stream()` to continue. The default prior of the regressions (`prior =
#'   "autoscale"`) takes its scales from the rows the model is built on, so build it on
#'   representative rows: a model of that prior built on fewer than 100 rows gives a warning of
#'   class `sgais_warning_autoscale_rows`.
#' @param source Where the rows come from: a data frame or matrix (or, for a model built from `x`
#'   and `y`, a list with `x` and `y`); the path of a CSV file with a header row, read
#'   `block_size` rows at a time through a connection (see "Reading a CSV file"); a `DBIResult` from
#'   `DBI::dbSendQuery()`, fetched with `DBI::dbFetch(n = block_size)` (and cleared at the end);
#'   or a function of one argument, the number of rows wanted, returning the next rows or `NULL`
#'   at the end.
#' @param ... Settings for [sgais()] (with a model; a fit keeps its own).
#' @param block_size Rows read per block; by default 20 chunks. While the fit keeps every row
#'   (no `reservoir_size`), rows are added to it in groups of at least a quarter of the rows it
#'   holds (read as one block when that is more than `block_size`), since adding rows copies
#'   those held: the stream's cost then stays linear in its length.
#' @param checkpoint Optional path of an `.rds` file to keep the latest fit in.
#' @param checkpoint_every Seconds between checkpoint writes.
#' @inheritParams sgais
#' @return A fit from [sgais()] on all rows of the stream.
#' @seealso [sgais()], [compare_models()], [detect_shifts()] to find where the stream changed
#' @export
#' @examples
#' data <- simulate_linear_regression(6000, seed = 1)
#' model <- linear_regression(y ~ ., data[1:1000, ])
#'
#' # from a CSV file, read 2000 rows at a time
#' file <- tempfile(fileext = ".csv")
#' write.csv(data, file, row.names = FALSE)
#' fit <- sgais_stream(model, file, block_size = 2000, seed = 1)
#' fit
#'
#' # from any function that returns the next rows, or NULL at the end
#' next_rows <- local({
#'   at <- 0
#'   function(n) {
#'     if (at >= nrow(data)) return(NULL)
#'     rows <- data[seq(at + 1, min(at + n, nrow(data))), ]
#'     at <<- at + nrow(rows)
#'     rows
#'   }
#' })
#' sgais_stream(model, next_rows, seed = 1)
#'
#' # memory bounded by a reservoir of 3000 earlier rows
#' fit <- sgais_stream(model, file, reservoir_size = 3000, seed = 1)
#' fit$model
#' unlink(file)
sgais_stream <- function(model, source, ..., control = sgais_control(), replicates = 1,
                         block_size = NULL, checkpoint = NULL, checkpoint_every = 60,
                         progress = default_progress(), seed = NULL) {
  call <- sys.call()
  fit <- NULL
  if (inherits(model, "sgais_fit")) {
    fit <- validate_continuable(model, call)
    settings <- fit$settings
    if (...length() || !missing(control) || !missing(replicates) || !is.null(seed)) {
      abort(paste("A fit is continued with its own settings, replicates and random streams;",
                  "give none of `...`, `control`, `replicates` or `seed`."), call)
    }
  } else {
    check_all_rows(model, call)
    settings <- check_kernel_model(control_settings(control, list(...), "sgais", call, model),
                                   model, call)
    warn_unrestarted(model, "sgais", settings, call)
    replicates <- check_whole_number(replicates, "replicates", 1, call)
    check_run_size(replicates, settings, model, "sgais", call)
    seed <- check_seed(seed, call)
  }
  if (missing(source)) abort("`source` is missing: give the data or where to read them.", call)
  block_size <- if (is.null(block_size)) 20 * settings$chunk_size else
    check_whole_number(block_size, "block_size", 1, call)
  checkpoint <- check_checkpoint(checkpoint, source, call)
  checkpoint_every <- check_positive(checkpoint_every, "checkpoint_every", call)
  progress <- check_flag(progress, "progress", call)
  next_block <- grouped_blocks(stream_source(source, block_size, call), block_size,
                               function() if (is.null(fit)) 0 else data_rows(fit$model$data))
  on.exit(next_block(NULL), add = TRUE) # closes a file, clears a query

  seen <- if (is.null(fit)) 0 else fit$n
  # rows read from `source` before the current block, for errors that name a row
  read <- 0
  is_csv <- is.character(source)
  if (progress) {
    bar <- cli::cli_progress_bar(
      format = "SGAIS stream {cli::pb_spin} {format_count(seen)} observations | log Z {status} | {cli::pb_elapsed}",
      total = NA, .auto_close = FALSE
    )
    on.exit(cli::cli_progress_done(id = bar), add = TRUE)
  }
  status <- ""
  written <- proc.time()[["elapsed"]]
  save_checkpoint <- function(fit) {
    if (is.null(checkpoint) || is.null(fit)) return(invisible())
    write_checkpoint(fit, checkpoint, call)
    written <<- proc.time()[["elapsed"]]
  }
  # the fit so far with its rows, which while a block is added are held by the grown model alone
  grown <- NULL
  whole <- function(fit) {
    if (is.null(fit) || !is.null(fit$model$data)) return(fit)
    fit$model <- model_keep_first(grown, fit$n)
    fit
  }
  stopped <- function(what) {
    fit <<- whole(fit)
    # a checkpoint that cannot be written (the error may be that) does not lose the fit
    saved <- tryCatch({
      save_checkpoint(fit)
      TRUE
    }, sgais_error_checkpoint = function(e) FALSE)
    if (is.null(fit)) return(NULL)
    sprintf("%s after %s observations; the fit of those is %s.", what, format_count(fit$n),
            if (is.null(checkpoint)) "kept" else if (saved) sprintf("kept (and in `%s`)", checkpoint)
            else "kept (the checkpoint could not be written)")
  }

  result <- tryCatch({
    repeat {
      block <- next_block(block_size)
      if (is.null(block)) break
      # (the fit's reliability is judged once, at the end, not for every block)
      if (is.null(fit)) warn_autoscale_template(model, nrow_of(block), call, "`model`")
      fit <- withCallingHandlers(
        if (is.null(fit)) {
          sgais_start(model_with_data(model, block, call), settings, replicates, FALSE, seed, call)
        } else {
          grown <- model_add_rows(fit$model, block, call)
          # the fit's rows are the first of the grown model's: held once while it runs
          if (model_dropped(fit$model) == 0) fit$model$data <- NULL
          sgais_more(fit, grown, FALSE)
        },
        sgais_error = function(e) stream_row_error(e, read, is_csv)
      )
      read <- read + nrow_of(block)
      fit <- whole(fit)
      if (!is.null(attr(fit, "interrupted"))) {
        # one replicate, interrupted inside the block: the fit of its last whole chunk, kept
        # as an interrupt between blocks keeps the fit of the last block
        attr(fit, "interrupted") <- NULL
        signalCondition(interrupt_condition())
      }
      seen <- fit$n
      status <- sprintf("%.6g", fit$log_evidence)
      if (progress) cli::cli_progress_update(id = bar, set = seen)
      if (proc.time()[["elapsed"]] - written >= checkpoint_every) save_checkpoint(fit)
    }
    if (is.null(fit)) abort("`source` gave no rows.", call)
    save_checkpoint(fit)
    fit
  }, interrupt = function(e) {
    message <- stopped("Interrupted")
    if (is.null(message)) stop("Interrupted before any rows were added.", call. = FALSE)
    warn(paste0(message, " Continue it with `sgais(fit, new_data)` or `sgais_stream(fit, ",
                "source)` on the observations after the first ", format_count(fit$n), "."),
         call, "sgais_warning_interrupted")
    fit
  }, error = function(e) {
    if (inherits(e, "sgais_error") && is.null(fit)) stop(e)
    message <- stopped("The stream stopped")
    abort(paste0(conditionMessage(e), if (!is.null(message)) paste0("\n", message, " Get it as `e$fit` from ",
                 "tryCatch(..., sgais_error_stream = function(e) e$fit).")),
          call, "sgais_error_stream", fit = fit, parent = e)
  })
  warn_if_unreliable(result)
}

# An error about a row of a block (`at row k` or `at observation k` in its message) raised again
# about the row of the stream, `read` rows having come before the block, and for a CSV file the
# line of the file (after its header line).
stream_row_error <- function(e, read, is_csv) {
  message <- conditionMessage(e)
  at <- regexpr("at (row|observation) [0-9]+", message)
  if (at < 0L || inherits(e, "sgais_error_stream")) return(invisible())
  k <- as.numeric(sub("^\\D+", "", regmatches(message, at)))
  where <- sprintf("at row %s of the stream%s", format_count(read + k),
                   if (is_csv) sprintf(" (line %s of the file)", format_count(read + k + 1)) else "")
  e$message <- paste0(substr(message, 1L, at - 1L), where,
                      substr(message, at + attr(at, "match.length"), nchar(message)))
  if (!is.null(e$row)) e$row <- read + k
  stop(e)
}

# `checkpoint`: NULL, or the path of the file to keep the fit in, checked before any work: its
# directory exists, and it is not (nor resolves to) the file being read, nor a directory. The
# path is returned as given.
check_checkpoint <- function(checkpoint, source, call) {
  if (is.null(checkpoint)) return(NULL)
  if (!is.character(checkpoint) || length(checkpoint) != 1L || is.na(checkpoint) ||
      !nzchar(checkpoint)) {
    abort(sprintf("`checkpoint` must be NULL or the path of a file, not %s.", describe(checkpoint)),
          call, "sgais_error_checkpoint")
  }
  dir <- dirname(checkpoint)
  if (!dir.exists(dir)) {
    abort(sprintf("`checkpoint`: the directory `%s` does not exist; create it first.", dir),
          call, "sgais_error_checkpoint")
  }
  if (dir.exists(checkpoint)) {
    abort(sprintf("`checkpoint` (`%s`) is a directory; give the path of a file.", checkpoint),
          call, "sgais_error_checkpoint")
  }
  # the file the path leads to: its directory's real path and, if it is a link, its target's
  where <- function(path) {
    if (file.exists(path)) normalizePath(path, mustWork = TRUE)
    else file.path(normalizePath(dirname(path), mustWork = TRUE), basename(path))
  }
  if (is.character(source) && length(source) == 1L && !is.na(source) && file.exists(source) &&
      identical(where(source), where(checkpoint))) {
    abort(sprintf(paste("`checkpoint` (`%s`) is the file `source` reads; the checkpoint would",
                        "replace the data. Give another path."), checkpoint),
          call, "sgais_error_checkpoint")
  }
  checkpoint
}

# Writes `fit` to `checkpoint` whole: to a new file of an unpredictable name in the same
# directory, then renamed over the target (which replaces the path's own entry, a link included,
# never what a link points to). A file the name could collide with is never reused.
write_checkpoint <- function(fit, checkpoint, call) {
  dir <- dirname(checkpoint)
  repeat {
    tmp <- tempfile(paste0(".", basename(checkpoint), "-"), tmpdir = dir, fileext = ".tmp")
    link <- Sys.readlink(tmp) # NA or "" unless a (possibly dangling) link is there
    if (!file.exists(tmp) && (is.na(link) || !nzchar(link))) break
  }
  ok <- tryCatch({
    saveRDS(fit, tmp)
    file.rename(tmp, checkpoint)
  }, error = function(e) FALSE, warning = function(w) FALSE)
  if (!isTRUE(ok)) {
    unlink(tmp)
    abort(sprintf("Could not write the checkpoint `%s`.", checkpoint), call, "sgais_error_checkpoint")
  }
  invisible(checkpoint)
}

# A function next(n) returning up to n next rows of `source`, or NULL at its end; next(NULL)
# releases the source (closes the file, clears the query). One kind of source each:
# in-memory data, a CSV file path, a DBIResult or a user function. `arg` names the argument.
stream_source <- function(source, block_size, call, arg = "source") {
  if (is.function(source)) {
    if (!length(formals(source)) && !is.primitive(source)) {
      abort(sprintf(paste("`%s` must be a function of one argument, the number of rows to return",
                          "(and NULL at the end), e.g. `function(n) ...`."), arg), call)
    }
    done <- FALSE
    return(function(n) {
      if (is.null(n) || done) return(NULL)
      rows <- source(n)
      if (is.null(rows) || nrow_of(rows) == 0L) {
        done <<- TRUE
        return(NULL)
      }
      rows
    })
  }
  if (inherits(source, "DBIResult")) {
    if (!requireNamespace("DBI", quietly = TRUE)) abort("Reading a database query needs the DBI package.", call)
    return(function(n) {
      if (is.null(n)) {
        if (DBI::dbIsValid(source)) DBI::dbClearResult(source)
        return(NULL)
      }
      if (!DBI::dbIsValid(source) || DBI::dbHasCompleted(source)) return(NULL)
      rows <- DBI::dbFetch(source, n = n)
      if (nrow(rows) == 0L) NULL else rows
    })
  }
  if (is.character(source) && length(source) == 1L && !is.na(source)) {
    if (!file.exists(source)) abort(sprintf("`%s`: there is no file `%s`.", arg, source), call)
    return(csv_source(source))
  }
  if (is_in_memory(source)) {
    total <- nrow_of(source)
    at <- 0L
    return(function(n) {
      if (is.null(n) || at >= total) return(NULL)
      take <- seq.int(at + 1L, min(at + n, total))
      at <<- at + length(take)
      if (length(take) == total) return(source)
      if (is.data.frame(source) || is.matrix(source)) return(source[take, , drop = FALSE])
      x <- source$x
      list(x = if (is.null(dim(x))) x[take] else x[take, , drop = FALSE], y = source$y[take])
    })
  }
  abort(sprintf(paste(
    "`%s` must be a data frame or matrix, the path of a CSV file, a DBIResult from",
    "DBI::dbSendQuery() or a function returning the next rows; not %s."), arg, describe(source)),
    call)
}

# A source function (as stream_source()'s) over the rows of the CSV file `path`, read once, in
# order, through a connection: by data.table::fread() on the bytes of each block's lines when
# data.table is installed (and the option `sgais.csv_reader` is not "read.csv"), else by
# utils::read.csv(). The first block fixes the columns' types (csv_types()); later blocks are
# read as it was, and a value that is not what its column holds is an error naming its line.
csv_source <- function(path) {
  fast <- !identical(getOption("sgais.csv_reader"), "read.csv") &&
    requireNamespace("data.table", quietly = TRUE)
  con <- file(path, open = if (fast) "rb" else "r")
  open <- TRUE
  header <- NULL
  classes <- NULL
  lines <- 0 # lines of the file read, the header's included
  read_block <- if (fast) fread_lines(con) else read_csv_lines(con)
  finish <- function() {
    if (open) close(con)
    open <<- FALSE
    NULL
  }
  function(n) {
    if (is.null(n) || !open) return(finish())
    # a bad line ends the stream: the file is closed before the error goes on
    withCallingHandlers({
      block <- read_block(n, header, classes, lines)
      if (is.null(block) || nrow(block$rows) == 0L) return(finish())
      rows <- block$rows
      if (is.null(header)) {
        header <<- names(rows)
        classes <<- csv_types(rows)
      } else {
        rows <- csv_fixed_types(rows, classes, lines)
      }
      lines <<- lines + block$lines
      rows
    }, error = function(e) finish())
  }
}

# The type each column of a CSV file keeps, from its first block: so that a column of labels
# that happen to be digits stays labels; but numbers are numbers whatever the first block held
# (whole numbers there, decimals later), and a column empty there (NA) is read as it comes.
csv_types <- function(rows) {
  classes <- vapply(rows, function(x) class(x)[1L], character(1))
  classes[classes %in% c("integer", "numeric")] <- "numeric"
  classes[classes == "logical" & vapply(rows, function(x) all(is.na(x)), NA)] <- NA
  classes
}

# The rows of a later block with the types `classes` of the first: numbers as doubles (a
# column empty in this block included). A value in a column of numbers that is not one is an
# error of class `sgais_error_column_type` naming its line (`lines` came before the block's).
csv_fixed_types <- function(rows, classes, lines) {
  for (j in which(classes %in% "numeric")) {
    x <- rows[[j]]
    if (is.numeric(x) || (is.logical(x) && all(is.na(x)))) {
      rows[[j]] <- as.double(x)
      next
    }
    x <- trimws(as.character(x))
    bad <- which(!is.na(x) & nzchar(x) & is.na(suppressWarnings(as.numeric(x))))
    if (!length(bad)) {
      rows[[j]] <- as.numeric(x)
      next
    }
    abort(sprintf("Column `%s` of the file holds \"%s\" at line %s, where it holds numbers.",
                  names(rows)[j], x[bad[1]], format_count(lines + bad[1])),
          NULL, "sgais_error_column_type", column = names(rows)[j], line = lines + bad[1])
  }
  rows
}

# A function(n, header, classes, lines) reading the next `n` rows of the CSV file open on `con`
# (in binary mode) with data.table::fread(), `lines` lines of it having been read: the bytes of
# the next n lines are taken from the connection (no line is read twice, so a file is read in
# time linear in its length) and parsed from memory; with `header` NULL the first line is the
# header, else the columns are read as `classes`. Returns list(rows, lines), or NULL at the end
# of the file.
fread_lines <- function(con) {
  buffer <- raw(0)
  end <- FALSE
  line_bytes <- 256 # bytes per line, estimated from the lines read
  function(n, header, classes, lines) {
    first <- is.null(header)
    want <- n + first
    repeat {
      newlines <- grepRaw(as.raw(10L), buffer, fixed = TRUE, all = TRUE)
      if (length(newlines) >= want || end) break
      more <- readBin(con, "raw", max(65536, ceiling(1.1 * (want - length(newlines)) * line_bytes)))
      if (!length(more)) end <<- TRUE
      buffer <<- c(buffer, more)
      more <- NULL # (a block's bytes are held at most twice at a time)
    }
    if (length(newlines) >= want) {
      cut <- newlines[want]
      taken <- want
    } else {
      # the end of the file, whose last line may have no newline
      cut <- length(buffer)
      taken <- length(newlines) + (cut > 0L && buffer[cut] != as.raw(10L))
      if (!taken) return(NULL)
    }
    bytes <- buffer[seq_len(cut)]
    buffer <<- buffer[seq.int(cut + 1L, length.out = length(buffer) - cut)]
    line_bytes <<- cut / taken
    # (one string holding a newline: fread() parses it in memory)
    text <- rawToChar(if (bytes[cut] == as.raw(10L)) bytes else c(bytes, as.raw(10L)))
    # fread() skips, stops before or drops as a footer a line of another number of fields (and
    # bumps a column of numbers holding text to text, which csv_fixed_types() names): a row
    # for each line that is not blank, or the line is named
    ends <- newlines[newlines <= cut]
    if (length(ends) < taken) ends <- c(ends, cut + 1L)
    size <- diff(c(0L, ends)) - 1L
    blank <- size == 0L | (size == 1L & bytes[pmax(ends - 1L, 1L)] == as.raw(13L))
    bytes <- NULL
    fixed <- if (!first) list(col.names = header, colClasses = csv_class_list(classes))
    rows <- tryCatch(
      suppressWarnings(do.call(data.table::fread, c(list(
        text = text, sep = ",", header = first, integer64 = "double", blank.lines.skip = TRUE,
        check.names = FALSE, data.table = FALSE, showProgress = FALSE, nThread = sgais_threads()
      ), fixed))),
      error = function(e) NULL
    )
    fields <- if (first) NA else length(header)
    if (is.null(rows) || nrow(rows) != sum(!blank) - first ||
        (!is.na(fields) && ncol(rows) != fields)) {
      csv_bad_line(text, lines, fields)
    }
    list(rows = rows, lines = taken)
  }
}

# The error for a line of a CSV file's block `text` (after `lines` lines of the file) that
# fread() could not read: the first whose number of fields is not `fields` (NA: the first
# line's), counted by its commas; the block's lines if none is.
csv_bad_line <- function(text, lines, fields) {
  each <- strsplit(text, "\r?\n")[[1L]]
  count <- lengths(regmatches(each, gregexpr(",", each, fixed = TRUE))) + 1L
  if (is.na(fields)) fields <- count[1L]
  bad <- which(nzchar(each) & count != fields)
  if (!length(bad)) {
    abort(sprintf("Lines %s to %s of the file could not be read as a CSV block.",
                  format_count(lines + 1), format_count(lines + length(each))), NULL,
          "sgais_error_csv_line", line = lines + 1)
  }
  line <- lines + bad[1L]
  got <- count[bad[1L]]
  abort(sprintf("Line %s of the file has %d field%s, not the %d of its header.",
                format_count(line), got, if (got == 1L) "" else "s", fields),
        NULL, "sgais_error_csv_line", line = line)
}

# fread()'s `colClasses` for the types `classes` (those of csv_types(); others are read as
# they come).
csv_class_list <- function(classes) {
  keep <- classes %in% c("numeric", "character", "logical")
  split(which(keep), classes[keep])
}

# As fread_lines(), with utils::read.csv() on the connection `con` (open in text mode).
read_csv_lines <- function(con) {
  function(n, header, classes, lines) {
    rows <- tryCatch(
      withCallingHandlers(
        if (is.null(header)) utils::read.csv(con, nrows = n, check.names = FALSE)
        else utils::read.csv(con, header = FALSE, nrows = n, col.names = header,
                             colClasses = classes, check.names = FALSE),
        # a last line without its newline is read; fread() does not warn of it either
        warning = function(w) {
          if (grepl("incomplete final line", conditionMessage(w))) invokeRestart("muffleWarning")
        }
      ),
      error = function(e) {
        message <- conditionMessage(e)
        if (grepl("no lines available", message)) return(NULL)
        # (read.csv() does not say which line)
        abort(sprintf("Lines %s to %s of the file: %s", format_count(lines + 1),
                      format_count(lines + n), message), NULL, "sgais_error_csv_line",
              line = lines + 1)
      }
    )
    if (is.null(rows)) return(NULL)
    list(rows = rows, lines = nrow(rows) + is.null(header))
  }
}

# Groups the blocks of `next_block` (a stream_source()) so that each group adds at least
# `growth` times the rows the fit already holds (`held()`), and at least one block: adding rows
# to a fit copies those it holds (model_add_rows()), so with every row kept, blocks of a fixed
# size would make a stream's cost quadratic in its length; groups growing with it keep the
# copying linear (about 1 / growth copies of the stream in all). With a bounded reservoir a fit
# holds few rows, and a group is a block. Returns a function like `next_block`.
grouped_blocks <- function(next_block, block_size, held, growth = 0.25) {
  force(next_block) # a bad source is an error here, not when the stream is closed
  function(n) {
    if (is.null(n)) return(next_block(NULL))
    blocks <- list()
    got <- 0
    repeat {
      # (what the group still needs in one block: fewer, larger reads and no binding)
      block <- next_block(max(block_size, ceiling(growth * held() - got)))
      if (is.null(block)) break
      blocks[[length(blocks) + 1L]] <- block
      got <- got + nrow_of(block)
      if (got >= growth * held()) break
    }
    if (length(blocks) == 0L) NULL else bind_rows_of(blocks)
  }
}

# The rows of several blocks of data (data frames, matrices, or lists with `x` and `y`) as one.
bind_rows_of <- function(blocks) {
  if (length(blocks) == 1L) return(blocks[[1L]])
  first <- blocks[[1L]]
  if (is.data.frame(first) || is.matrix(first)) return(do.call(rbind, blocks))
  x <- lapply(blocks, `[[`, "x")
  list(x = if (is.null(dim(first$x))) do.call(c, x) else do.call(rbind, x),
       y = do.call(c, lapply(blocks, `[[`, "y")))
}

# Data held in memory (rather than a file, query or function to read them from).
is_in_memory <- function(source) {
  is.data.frame(source) || is.matrix(source) || (is.list(source) && !is.null(source$x))
}
