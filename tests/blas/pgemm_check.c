/* psgemm_ (or pdgemm_) on a P x Q BLACS grid, checked, and timed on request: the
 * ScaLAPACK client of libtiledmm_blas (tests/blas/run_scalapack.sh runs it under
 * mpirun, with the library preloaded in every rank). One source for both precisions:
 * built as psgemm_check, and with TMM_PGEMM_DOUBLE defined as pdgemm_check (the
 * element type, the routines, the MPI type and the rounding bound follow from it).
 *
 *   psgemm_check|pdgemm_check [--grid PxQ] [--size M,N,K] [--nb NB] [--trans NN|TN|NT|TT]
 *                [--alpha A] [--beta B] [--reps R] [--check full|sample|none]
 *                [--dump FILE] [--compare FILE] [--expect-tiledmm]
 *
 * Every element of A, B and C is a function of its global indices, so each rank
 * fills its own blocks and checks them against a double-precision reference
 * (--check full: every local element; sample: 64 per rank; the default is full up to
 * 2^27 multiply-adds per rank, else sample). --dump writes the whole C (gathered on
 * rank 0, column-major, in the element type) and --compare reads such a file (say from a
 * single-process run) and compares within the rounding bound. --expect-tiledmm makes
 * each rank read libtiledmm_blas's counters (tmm_blas_get_counters, found with dlsym:
 * the program does not link the library) and fail unless tiledmm computed every
 * local sgemm_ (dgemm_) call and pilaenv_ was widened. --reps R times R products after a
 * warm-up and prints the median, in TFLOP/s. Exits 0 when every check passes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiledmm/tiledmm_blas.h"

/* ScaLAPACK, BLACS and PBLAS, as their libraries define them. */
void Cblacs_pinfo(int* rank, int* nprocs);
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int context);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* ictxt, const int* lld, int* info);
void psgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const float* alpha, const float* a, const int* ia, const int* ja, const int* desca,
             const float* b, const int* ib, const int* jb, const int* descb, const float* beta,
             float* c, const int* ic, const int* jc, const int* descc);
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
             const double* alpha, const double* a, const int* ia, const int* ja, const int* desca,
             const double* b, const int* ib, const int* jb, const int* descb, const double* beta,
             double* c, const int* ic, const int* jc, const int* descc);

/* The precision this build checks: the element type, PBLAS's routine, the local
 * routine whose counters must show tiledmm, the MPI type and the unit roundoff. */
#ifdef TMM_PGEMM_DOUBLE
typedef double real;
#define PGEMM pdgemm_
#define PGEMM_NAME "pdgemm"
#define LOCAL_NAME "dgemm_"
#define LOCAL_ROUTINE TMM_BLAS_DGEMM
#define MPI_REAL_TYPE MPI_DOUBLE
#define UNIT_ROUNDOFF 1.1102230246251565e-16 /* 2^-53 */
#define PRECISION_NAME "FP64"
#else
typedef float real;
#define PGEMM psgemm_
#define PGEMM_NAME "psgemm"
#define LOCAL_NAME "sgemm_"
#define LOCAL_ROUTINE TMM_BLAS_SGEMM
#define MPI_REAL_TYPE MPI_FLOAT
#define UNIT_ROUNDOFF 5.960464477539063e-08 /* 2^-24 */
#define PRECISION_NAME "FP32"
#endif

/* A value in [-1, 1) from the matrix tag and global indices (a hash), with 24
 * significant bits: exact in either precision. */
static float element(int tag, int64_t i, int64_t j) {
  uint64_t x = (uint64_t)tag * 0x9E3779B97F4A7C15ull ^ (uint64_t)i * 0xBF58476D1CE4E5B9ull ^
               (uint64_t)j * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEEBull;
  x ^= x >> 29;
  return (float)((double)(x & 0xFFFFFF) / 8388608.0 - 1.0);
}

/* Global index of local index l of a dimension cut in blocks of nb over nprocs. */
static int64_t global_index(int64_t l, int nb, int myproc, int nprocs) {
  return (l / nb * nprocs + myproc) * nb + l % nb;
}

typedef struct {
  int p, q, m, n, k, nb, reps;
  char ta, tb;
  real alpha, beta;
  const char* check; /* full, sample, none or NULL (automatic) */
  const char* dump;
  const char* compare;
  int expect_tiledmm;
} options;

static int parse(int argc, char** argv, options* o) {
  o->p = 2, o->q = 2, o->m = 512, o->n = 512, o->k = 512, o->nb = 64, o->reps = 0;
  o->ta = 'N', o->tb = 'N', o->alpha = 1, o->beta = 0.5;
  o->check = NULL, o->dump = NULL, o->compare = NULL, o->expect_tiledmm = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--expect-tiledmm")) {
      o->expect_tiledmm = 1;
      continue;
    }
    if (v == NULL) return 0;
    ++i;
    if (!strcmp(a, "--grid")) {
      if (sscanf(v, "%dx%d", &o->p, &o->q) != 2) return 0;
    } else if (!strcmp(a, "--size")) {
      if (sscanf(v, "%d,%d,%d", &o->m, &o->n, &o->k) != 3) return 0;
    } else if (!strcmp(a, "--nb")) {
      o->nb = atoi(v);
    } else if (!strcmp(a, "--trans")) {
      if (strlen(v) != 2) return 0;
      o->ta = v[0], o->tb = v[1];
    } else if (!strcmp(a, "--alpha")) {
      o->alpha = (real)strtod(v, NULL);
    } else if (!strcmp(a, "--beta")) {
      o->beta = (real)strtod(v, NULL);
    } else if (!strcmp(a, "--reps")) {
      o->reps = atoi(v);
    } else if (!strcmp(a, "--check")) {
      o->check = v;
    } else if (!strcmp(a, "--dump")) {
      o->dump = v;
    } else if (!strcmp(a, "--compare")) {
      o->compare = v;
    } else {
      return 0;
    }
  }
  return o->p > 0 && o->q > 0 && o->m > 0 && o->n > 0 && o->k > 0 && o->nb > 0;
}

/* One distributed matrix: its descriptor and local storage (column-major). */
typedef struct {
  int desc[9];
  int rows, cols, ld; /* global rows/cols; local leading dimension */
  int mloc, nloc;
  real* data;
} dmatrix;

static int make_matrix(dmatrix* x, int tag, int rows, int cols, int nb, int ctxt, int myrow,
                       int mycol, int p, int q) {
  const int zero = 0;
  int info = 0;
  x->rows = rows, x->cols = cols;
  x->mloc = numroc_(&rows, &nb, &myrow, &zero, &p);
  x->nloc = numroc_(&cols, &nb, &mycol, &zero, &q);
  x->ld = x->mloc > 1 ? x->mloc : 1;
  descinit_(x->desc, &rows, &cols, &nb, &nb, &zero, &zero, &ctxt, &x->ld, &info);
  x->data = malloc(sizeof(real) * (size_t)x->ld * (size_t)(x->nloc > 0 ? x->nloc : 1));
  if (info != 0 || x->data == NULL) return 0;
  for (int jl = 0; jl < x->nloc; ++jl) {
    const int64_t j = global_index(jl, nb, mycol, q);
    for (int il = 0; il < x->mloc; ++il)
      x->data[(size_t)jl * x->ld + il] = element(tag, global_index(il, nb, myrow, p), j);
  }
  return 1;
}

/* op(A)(i, l) and op(B)(l, j) from the element functions. */
static double op_a(const options* o, int64_t i, int64_t l) {
  return o->ta == 'N' ? element(1, i, l) : element(1, l, i);
}
static double op_b(const options* o, int64_t l, int64_t j) {
  return o->tb == 'N' ? element(2, l, j) : element(2, j, l);
}

/* The double-precision reference of C(i,j) and the rounding bound of the precision
 * around it (in double precision it also covers the reference's own rounding). */
static double reference(const options* o, int64_t i, int64_t j, double* bound) {
  double dot = 0, mag = 0;
  for (int64_t l = 0; l < o->k; ++l) {
    const double t = op_a(o, i, l) * op_b(o, l, j);
    dot += t;
    mag += fabs(t);
  }
  const double c0 = element(3, i, j);
  const double eps = UNIT_ROUNDOFF;
  *bound = 2.0 * (o->k + 2) * eps * (fabs(o->alpha) * mag + fabs(o->beta * c0)) + 1e-30;
  return o->alpha * dot + o->beta * c0;
}

/* |C(i,j) - reference| / bound for one global element (<= 1 passes). */
static double error_ratio(const options* o, int64_t i, int64_t j, real got) {
  double bound = 0;
  const double ref = reference(o, i, j, &bound);
  return fabs((double)got - ref) / bound;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  options o;
  if (!parse(argc, argv, &o) || o.p * o.q != nprocs) {
    if (rank == 0)
      fprintf(stderr, "usage: " PGEMM_NAME
                      "_check [--grid PxQ (P*Q = ranks)] [--size M,N,K] [--nb NB] "
                      "[--trans NN|TN|NT|TT] [--alpha A] [--beta B] [--reps R] "
                      "[--check full|sample|none] [--dump FILE] [--compare FILE] "
                      "[--expect-tiledmm]\n");
    MPI_Finalize();
    return 2;
  }
  int ctxt = 0, p = 0, q = 0, myrow = 0, mycol = 0;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", o.p, o.q);
  Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);

  dmatrix a, b, c;
  const int ok = make_matrix(&a, 1, o.ta == 'N' ? o.m : o.k, o.ta == 'N' ? o.k : o.m, o.nb, ctxt,
                             myrow, mycol, p, q) &&
                 make_matrix(&b, 2, o.tb == 'N' ? o.k : o.n, o.tb == 'N' ? o.n : o.k, o.nb, ctxt,
                             myrow, mycol, p, q) &&
                 make_matrix(&c, 3, o.m, o.n, o.nb, ctxt, myrow, mycol, p, q);
  if (!ok) {
    fprintf(stderr, "rank %d: cannot set up the matrices\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int one = 1;
  const char ta[2] = {o.ta, 0}, tb[2] = {o.tb, 0};
  PGEMM(ta, tb, &o.m, &o.n, &o.k, &o.alpha, a.data, &one, &one, a.desc, b.data, &one, &one, b.desc,
        &o.beta, c.data, &one, &one, c.desc);

  int failures = 0;
  /* The check, against a double-precision reference of the same elements. */
  const double work = (double)c.mloc * c.nloc * o.k;
  const int full = o.check ? !strcmp(o.check, "full") : work <= 134217728.0;
  const int none = o.check && !strcmp(o.check, "none");
  double worst = 0;
  long checked = 0;
  if (!none && c.mloc > 0 && c.nloc > 0) {
    const long count = full ? (long)c.mloc * c.nloc : 64;
    for (long s = 0; s < count; ++s) {
      const int il = full ? (int)(s % c.mloc) : (int)((s * 7919 + rank) % c.mloc);
      const int jl = full ? (int)(s / c.mloc) : (int)((s * 104729 + 3 * rank) % c.nloc);
      const double r =
          error_ratio(&o, global_index(il, o.nb, myrow, p), global_index(jl, o.nb, mycol, q),
                      c.data[(size_t)jl * c.ld + il]);
      if (!(r <= worst)) worst = r;
      ++checked;
    }
  }
  double worst_all = 0;
  long checked_all = 0;
  MPI_Reduce(&worst, &worst_all, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&checked, &checked_all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    const int pass = !(worst_all > 1.0);
    if (!none)
      printf("check: %ld elements against FP64, worst error %.3g of the " PRECISION_NAME
             " bound: %s\n",
             checked_all, worst_all, pass ? "PASS" : "FAIL");
    failures += !pass;
  }

  /* Gather C on rank 0 (each rank sends its local block and its grid position). */
  if (o.dump || o.compare) {
    real* whole = NULL;
    if (rank == 0) whole = calloc((size_t)o.m * o.n, sizeof(real));
    for (int r = 0; r < nprocs; ++r) {
      int pos[4] = {myrow, mycol, c.mloc, c.nloc};
      real* block = c.data;
      if (r != 0 && rank == r) {
        MPI_Send(pos, 4, MPI_INT, 0, 1, MPI_COMM_WORLD);
        MPI_Send(c.data, c.ld * c.nloc, MPI_REAL_TYPE, 0, 2, MPI_COMM_WORLD);
      }
      if (rank != 0) continue;
      int ldr = c.ld;
      if (r != 0) {
        MPI_Recv(pos, 4, MPI_INT, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        ldr = pos[2] > 1 ? pos[2] : 1;
        block = malloc(sizeof(real) * (size_t)ldr * (size_t)(pos[3] > 0 ? pos[3] : 1));
        MPI_Recv(block, ldr * pos[3], MPI_REAL_TYPE, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      for (int jl = 0; jl < pos[3]; ++jl)
        for (int il = 0; il < pos[2]; ++il)
          whole[global_index(jl, o.nb, pos[1], q) * o.m + global_index(il, o.nb, pos[0], p)] =
              block[(size_t)jl * ldr + il];
      if (block != c.data) free(block);
    }
    if (rank == 0 && o.dump) {
      FILE* f = fopen(o.dump, "wb");
      if (!f || fwrite(whole, sizeof(real), (size_t)o.m * o.n, f) != (size_t)o.m * o.n) {
        fprintf(stderr, "cannot write %s\n", o.dump);
        ++failures;
      }
      if (f) fclose(f);
    }
    if (rank == 0 && o.compare) {
      real* ref = malloc(sizeof(real) * (size_t)o.m * o.n);
      FILE* f = fopen(o.compare, "rb");
      if (!f || !ref || fread(ref, sizeof(real), (size_t)o.m * o.n, f) != (size_t)o.m * o.n) {
        fprintf(stderr, "cannot read %s\n", o.compare);
        ++failures;
      } else {
        /* Two results, each within the bound of the exact one: within twice it of
         * each other. */
        double worst_diff = 0;
        for (int64_t j = 0; j < o.n; ++j)
          for (int64_t i = 0; i < o.m; ++i) {
            double bound = 0;
            reference(&o, i, j, &bound);
            const double r = fabs((double)whole[j * o.m + i] - ref[j * o.m + i]) / (2.0 * bound);
            if (!(r <= worst_diff)) worst_diff = r;
          }
        const int pass = !(worst_diff > 1.0);
        printf("compare with %s: difference within twice the " PRECISION_NAME
               " bound (worst %.3g of it): %s\n",
               o.compare, worst_diff, pass ? "PASS" : "FAIL");
        failures += !pass;
      }
      if (f) fclose(f);
      free(ref);
    }
    free(whole);
  }

  /* Timing: R products after the one above, median. */
  if (o.reps > 0) {
    double* t = malloc(sizeof(double) * (size_t)o.reps);
    for (int r = 0; r < o.reps; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      PGEMM(ta, tb, &o.m, &o.n, &o.k, &o.alpha, a.data, &one, &one, a.desc, b.data, &one, &one,
            b.desc, &o.beta, c.data, &one, &one, c.desc);
      MPI_Barrier(MPI_COMM_WORLD);
      t[r] = MPI_Wtime() - t0;
    }
    for (int i = 1; i < o.reps; ++i)
      for (int j = i; j > 0 && t[j] < t[j - 1]; --j) {
        const double s = t[j];
        t[j] = t[j - 1];
        t[j - 1] = s;
      }
    const double median = t[o.reps / 2];
    if (rank == 0)
      printf(PGEMM_NAME
             " %c%c %d x %d x %d on %d x %d ranks, nb %d: median %.3f ms of %d, %.2f TFLOP/s\n",
             o.ta, o.tb, o.m, o.n, o.k, p, q, o.nb, median * 1e3, o.reps,
             2.0 * o.m * o.n * o.k / median / 1e12);
    free(t);
  }

  /* What libtiledmm_blas did in this rank, if it is loaded. */
  typedef tmm_status (*get_counters_fn)(tmm_blas_routine, tmm_blas_counters*);
  get_counters_fn get = (get_counters_fn)dlsym(RTLD_DEFAULT, "tmm_blas_get_counters");
  if (get != NULL) {
    tmm_blas_counters s, pl;
    s.struct_size = pl.struct_size = sizeof s;
    get(LOCAL_ROUTINE, &s);
    get(TMM_BLAS_PILAENV, &pl);
    printf("rank %d: " LOCAL_NAME
           " tiledmm %llu calls %.3g flops (largest k %lld), fallback %llu calls "
           "%.3g flops, recovered %llu; pilaenv_ widened %llu, ScaLAPACK's %llu\n",
           rank, (unsigned long long)s.tiledmm_calls, (double)s.tiledmm_flops,
           (long long)s.tiledmm_max_k, (unsigned long long)s.fallback_calls,
           (double)s.fallback_flops, (unsigned long long)s.recovered_calls,
           (unsigned long long)pl.tiledmm_calls, (unsigned long long)pl.fallback_calls);
    if (o.expect_tiledmm &&
        (s.tiledmm_calls == 0 || s.fallback_calls != 0 || s.recovered_calls != 0 ||
         pl.tiledmm_calls == 0 || pl.fallback_calls != 0)) {
      printf("rank %d: FAIL: expected tiledmm to compute every local " LOCAL_NAME
             " with a widened panel\n",
             rank);
      ++failures;
    }
  } else if (o.expect_tiledmm) {
    printf("rank %d: FAIL: libtiledmm_blas is not loaded (LD_PRELOAD)\n", rank);
    ++failures;
  }

  int failures_all = 0;
  MPI_Allreduce(&failures, &failures_all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  free(a.data);
  free(b.data);
  free(c.data);
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return failures_all == 0 ? 0 : 1;
}
