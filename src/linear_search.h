/* Exact evidence of many submodels of one linear regression (Bayesian variable selection over the
 * terms of a design), from its sufficient statistics: every allowed submodel by Gray-code
 * updates, given submodels with their posterior moments, and Metropolis-Hastings over the
 * submodels when they are too many to enumerate.
 *
 * A layer of its own above weights.h (rng.h) and threads.h, beside model.h: it uses the keyed
 * random streams and the interrupt polling but none of the model interface, kernels or
 * annealing, so it is not part of estimators.h, which includes them all. Its glue is
 * linear_search_r.c.
 *
 * The design A has n rows and q columns, the intercept first when there is one. Column j
 * belongs to group[j]: 0 for the columns in every submodel, k = 1..K for candidate term k (a
 * factor's or a polynomial's columns form one term, entering and leaving together). A
 * submodel is a set of terms; it is allowed when every included term's parents are included
 * (marginality). Its prior is the principal restriction of the full model's prior to its
 * columns (the same per-column prior, the principal submatrix of the g-priors' M), which is
 * what makes its evidence that of the model built on its columns alone. */
#ifndef SG_LINEAR_SEARCH_H
#define SG_LINEAR_SEARCH_H

#include "threads.h"
#include "weights.h"

/* The priors (kind), in the parametrisation of R/linear_regression.R:
 *   NORMAL  known noise variance s2; theta_j ~ N(mean_j, var_j) (lr_log_evidence());
 *   NIG     sigma^2 ~ InvGamma(shape, scale), theta_j | sigma^2 ~ N(mean_j, sigma^2 var_j)
 *           (nig_lr_log_evidence());
 *   G       BayesFactor's conventions (zellner_log_evidence()): the intercept (column 0, in
 *           group 0) and log sigma^2 flat, slopes | sigma^2 ~ N(0, g sigma^2 M^-1), g in units
 *           of sigma^2 M^-1 (Liang et al.'s g over the rows M was built from);
 *   ZS      Zellner-Siow: the G prior with g ~ InvGamma(1/2, r2 / 2) integrated out
 *           (zellner_siow_integral()). */
enum { LS_NORMAL = 0, LS_NIG = 1, LS_G = 2, LS_ZS = 3 };

/* The most terms an enumeration takes (2^30 submodels), so that a code fits an int in R. */
#define LS_MAX_ENUMERATE 30

typedef struct {
  int q, K;
  const double *xtx, *xty; /* A'A (q x q, column-major), A'y */
  double yy, n;            /* y'y, rows */
  const int *group;        /* q entries in 0..K */
  /* term k's parents (0-based terms): parent_term[parent_start[k] .. parent_start[k + 1]) */
  const int *parent_start, *parent_term;
  int kind;
  double s2, shape, scale;  /* NORMAL: s2; NIG: shape, scale */
  const double *mean, *var; /* NORMAL, NIG: per column */
  double g;                 /* G: g; ZS: r^2 */
  const double *gram;       /* G, ZS: M, (q - 1) x (q - 1), the slopes' */
  double offset;            /* added to every log evidence (the flat parts' log-normalisers) */
} ls_input;

/* The prepared problem (ls_setup): the posterior precision P, the vector b and the constant c0
 * of the augmented matrix [[P, b], [b', c0]] shared by all submodels, with the prior means of
 * the group-0 columns shifted into b and c0 (shift_statistics()); the prior means of candidate
 * columns enter b as var^-1 mean and c0 as mean^2 / var per included column. */
typedef struct {
  int kind, q, K, W; /* W: 64-bit words of a submodel's membership */
  double n, offset;
  double *P, *b, c0;
  int n0, *cols0;              /* the group-0 columns */
  int *term_start, *term_cols; /* term k's columns: term_cols[term_start[k] .. term_start[k + 1]) */
  uint64_t *parents;           /* K x W: term k's parents */
  /* NORMAL, NIG: the constant of every log evidence, and each term's sums of log var and of
   * mean^2 / var over its columns */
  double const0, *term_log_var, *term_mean2, shape, scale, *mean0;
  /* G, ZS: g or r^2; M; A'A[0, 0]; y'y less its intercept-only fit; for ZS the slopes' A'A and
   * A'y with the intercept eliminated (C = X'X - X'1 1'X / A00, d), and whether C = A00 M */
  double g, a00, syy, *gram, *cs, *ds;
  int usual;
} ls_problem;

/* Checks the input and prepares the problem (R_alloc'ed). Returns the status code. */
int ls_setup(const ls_input *in, ls_problem *p, sg_status *st);

/* Whether the submodel `member` (W words, bit k for term k) respects marginality. */
int ls_allowed(const ls_problem *p, const uint64_t *member);

/* The number of allowed submodels (K <= LS_MAX_ENUMERATE). */
double ls_count_allowed(const ls_problem *p);

/* Every allowed submodel in Gray-code order: its code (bit k - 1 for term k), number of terms and
 * log evidence, into arrays of ls_count_allowed() entries. Returns the status code. */
int ls_enumerate(const ls_problem *p, int *code, int *size, double *log_evidence, sg_status *st);

/* Posterior moments of a submodel's coefficients, q of them (zero for excluded columns).
 * NORMAL: normal with covariance `cov` (= scale, df infinite). NIG, G: multivariate t with df
 * degrees of freedom and scale matrix `scale` (cov = scale df / (df - 2)). ZS: a mixture over
 * the quadrature's nodes g[i], with weights weight[i] summing to 1, of multivariate t's with df
 * degrees of freedom, locations node_mean (q per node) and scales node_scale (q x q per node);
 * mean and cov are the mixture's. The caller allocates mean (q), cov and scale (q x q); the core
 * allocates the node arrays. */
enum { LS_MOMENTS_NORMAL = 0, LS_MOMENTS_T = 1, LS_MOMENTS_T_MIXTURE = 2 };
typedef struct {
  int kind, nodes;
  double df, *mean, *cov, *scale;
  double *g, *weight, *node_mean, *node_scale;
} ls_moments;

/* A submodel's log evidence by fresh factorisations, and its moments when mom is not NULL.
 * Returns the status code. */
int ls_evaluate(const ls_problem *p, const uint64_t *member, double *log_evidence,
                ls_moments *mom, sg_status *st);

/* The submodels whose evidence a chain computed: membership (W words each), log evidence and
 * visits, in the order first met, with a hash table on the membership (R_alloc'ed, grown by
 * doubling). */
typedef struct {
  int W, count, cap, table_cap;
  uint64_t *bits;
  double *log_evidence, *visits;
  int *table; /* table_cap slots: model index + 1, 0 empty */
} ls_cache;

void ls_cache_init(ls_cache *c, int W, int cap);
/* The index of `member` in the cache, or -1. */
int ls_cache_find(const ls_cache *c, const uint64_t *member);
/* Adds `member` (not in the cache) with its log evidence and visits; returns its index. */
int ls_cache_add(ls_cache *c, const uint64_t *member, double log_evidence, double visits);

/* A chain over the submodels: the current one, the iterations done and the key of its streams
 * (iteration i draws from the stream (key, i, 0), so a chain continued in pieces is one chain). */
typedef struct {
  uint64_t *model;
  double iteration;
  uint64_t key;
} ls_chain;

/* Runs `iterations` Metropolis-Hastings steps targeting exp(log evidence + log_prior_size[k])
 * over the allowed submodels of k terms, evaluating each submodel once (the cache). Records the
 * current submodel's number of terms after each step in trace_size and counts the accepted
 * moves in *accepted. Returns the status code. */
int ls_mcmc(const ls_problem *p, const double *log_prior_size, ls_chain *ch, int iterations,
            ls_cache *c, int *trace_size, double *accepted, sg_status *st);

/* log of the integral over g of the G prior's evidence times the density of g ~ InvGamma(1/2,
 * r2 / 2), less the terms that do not depend on g, for the probes of the tests: from a00 rows'
 * statistics with m generalised eigenvalues lam (multiplicity mult) of the slopes' cross
 * products against M, the squared projections s of the response on them and the residual qinf;
 * nodes (may be NULL) receives the number of nodes used. */
double ls_zs_log_integral(int m, const double *lam, const double *s, const double *mult,
                          double qinf, double n, double r2, int *nodes);

#endif
