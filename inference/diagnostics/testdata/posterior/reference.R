# Regenerates reference.csv from the draws in this directory with R's
# posterior package (Debian r-cran-posterior 1.4.0 when last run):
#   cd inference/diagnostics/testdata/posterior && Rscript reference.R
# Each <name>.csv holds one scalar's draws, one row per iteration and one
# column per chain. NA in reference.csv means posterior returned NA.
suppressMessages(library(posterior))
files <- sort(setdiff(list.files(".", pattern = "\\.csv$"), "reference.csv"))
rows <- lapply(files, function(f) {
  x <- as.matrix(read.csv(f, header = FALSE))
  q <- function(p) quantile(x, p, names = FALSE) # type 7
  data.frame(
    name = sub("\\.csv$", "", f),
    mean = mean(x), sd = sd(x), q5 = q(0.05), q50 = q(0.5), q95 = q(0.95),
    rhat = suppressWarnings(rhat(x)),
    ess_bulk = suppressWarnings(ess_bulk(x)),
    ess_tail = suppressWarnings(ess_tail(x)),
    rhat_basic = rhat_basic(x),
    ess_mean = suppressWarnings(ess_mean(x)),
    rhat_bulk = posterior:::.rhat(posterior:::z_scale(posterior:::.split_chains(x))),
    rhat_tail = posterior:::.rhat(posterior:::z_scale(posterior:::.split_chains(posterior:::fold_draws(x)))),
    ess_q05 = suppressWarnings(ess_quantile(x, 0.05, names = FALSE)),
    ess_q95 = suppressWarnings(ess_quantile(x, 0.95, names = FALSE))
  )
})
out <- do.call(rbind, rows)
write.csv(format(out, digits = 17), "reference.csv", row.names = FALSE, quote = FALSE)
cat("posterior", as.character(packageVersion("posterior")), "\n")
