// Finding and calling the system BLAS (system_blas.hpp says which and why).
//
// Everything here avoids operator new: the loader runs inside a product, and the
// allocation-fault tests fail each allocation of a call in turn; a library found or
// not found is kept for the life of the process, so a failure must not be mistaken for
// "none". dlopen's own memory comes from malloc.
#include "cpu/system_blas.hpp"

#include <dlfcn.h>
#include <pthread.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tiledmm {
namespace {

// True when `address` lies in libtiledmm_blas or a copy of it: a library that exports
// its marker tmm_blas_version. Its sgemm_ and dgemm_ call tiledmm, so calling them from
// here would recurse.
bool in_tiledmm_blas(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return false;
  void* h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (h == nullptr) return false;
  void* marker = dlsym(h, "tmm_blas_version");
  Dl_info where{};
  const bool shim =
      marker != nullptr && dladdr(marker, &where) != 0 && where.dli_fbase == info.dli_fbase;
  dlclose(h);  // balances the RTLD_NOLOAD reference
  return shim;
}

// fork() while another thread is inside the BLAS: OpenBLAS's fork handler stops its
// worker threads, and a call waiting for them in the parent then never returns. So a
// fork waits until no product of this library is inside the BLAS, and holds new ones
// back until it is done. The handlers are registered after the BLAS has loaded, so
// that this "prepare" runs before the BLAS's own (prepare handlers run in the reverse
// order of registration). Plain pthread objects: the child re-creates them.
pthread_mutex_t g_fork_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_fork_cond = PTHREAD_COND_INITIALIZER;
int g_in_blas = 0;       // products inside the BLAS now
bool g_forking = false;  // a fork is waiting for them, or under way

void before_fork() {
  pthread_mutex_lock(&g_fork_mutex);  // held through fork(): no caller is in between
  g_forking = true;
  while (g_in_blas > 0) pthread_cond_wait(&g_fork_cond, &g_fork_mutex);
}

void after_fork_in_parent() {
  g_forking = false;
  pthread_cond_broadcast(&g_fork_cond);
  pthread_mutex_unlock(&g_fork_mutex);
}

void after_fork_in_child() {  // the only thread: nobody else is inside or waiting
  g_forking = false;
  g_in_blas = 0;
  pthread_cond_init(&g_fork_cond, nullptr);
  pthread_mutex_unlock(&g_fork_mutex);
}

// One product inside the BLAS, for the fork handlers above.
class InsideBlas {
 public:
  InsideBlas() {
    pthread_mutex_lock(&g_fork_mutex);
    while (g_forking) pthread_cond_wait(&g_fork_cond, &g_fork_mutex);
    ++g_in_blas;
    pthread_mutex_unlock(&g_fork_mutex);
  }
  ~InsideBlas() {
    pthread_mutex_lock(&g_fork_mutex);
    if (--g_in_blas == 0) pthread_cond_broadcast(&g_fork_cond);
    pthread_mutex_unlock(&g_fork_mutex);
  }
  InsideBlas(const InsideBlas&) = delete;
  InsideBlas& operator=(const InsideBlas&) = delete;
};

template <class Fn>
Fn symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

// The library `name`, if it loads and has a usable sgemm_ and dgemm_.
bool load(const char* name, SystemBlas& out, char* kernel_name, size_t size) {
  void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return false;
  SystemBlas blas;
  blas.sgemm = symbol<FortranGemm<float>>(h, "sgemm_");
  blas.dgemm = symbol<FortranGemm<double>>(h, "dgemm_");
  if (blas.sgemm == nullptr || blas.dgemm == nullptr ||
      in_tiledmm_blas(reinterpret_cast<void*>(blas.sgemm)) ||
      in_tiledmm_blas(reinterpret_cast<void*>(blas.dgemm))) {
    dlclose(h);
    return false;
  }
  blas.get_threads = symbol<int (*)()>(h, "openblas_get_num_threads");
  if (blas.get_threads == nullptr)
    blas.get_threads = symbol<int (*)()>(h, "bli_thread_get_num_threads");
  if (blas.get_threads == nullptr) blas.get_threads = symbol<int (*)()>(h, "mkl_get_max_threads");
  blas.set_threads_local = symbol<int (*)(int)>(h, "mkl_set_num_threads_local");
  // The name as given, without its folders, for the report.
  const char* slash = std::strrchr(name, '/');
  std::snprintf(kernel_name, size, "system BLAS (%s)", slash != nullptr ? slash + 1 : name);
  blas.kernel_name = kernel_name;
  out = blas;
  return true;  // the handle stays open for the life of the process
}

const SystemBlas* find_system_blas() {
  static SystemBlas found;
  static char kernel_name[256];
  const char* setting = std::getenv("TILEDMM_CPU_BLAS");
  if (setting != nullptr && std::strcmp(setting, "none") == 0) return nullptr;
  if (setting != nullptr && *setting != '\0' && std::strcmp(setting, "auto") != 0)
    return load(setting, found, kernel_name, sizeof kernel_name) ? &found : nullptr;
  for (const char* name : kSystemBlasCandidates)
    if (load(name, found, kernel_name, sizeof kernel_name)) return &found;
  return nullptr;
}

bool fits_int(int64_t v) { return v <= INT_MAX; }

}  // namespace

const SystemBlas* system_blas() {
  static const SystemBlas* const blas = [] {
    const SystemBlas* found = find_system_blas();
    if (found != nullptr) pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    return found;
  }();
  return blas;
}

template <class T>
bool system_blas_can_run(const SystemBlas& blas, const GemmView<T>& p, int host_threads) {
  return fits_int(p.m) && fits_int(p.n) && fits_int(p.k) && fits_int(p.lda) && fits_int(p.ldb) &&
         fits_int(p.ldc) && (host_threads == 0 || blas.set_threads_local != nullptr);
}

template <class T>
int system_blas_gemm(const SystemBlas& blas, const GemmView<T>& p, int host_threads) {
  // Row-major C (m x n) is column-major C^T (n x m) = op(B)^T * op(A)^T. Row-major B,
  // read as column-major, is B^T: so op(B)^T is B as stored when B is not transposed
  // ('N'), and its transpose otherwise ('T'); the same for A.
  const char trans_b = p.trans_b ? 'T' : 'N';
  const char trans_a = p.trans_a ? 'T' : 'N';
  const int m = int(p.n), n = int(p.m), k = int(p.k);
  const int lda = int(p.ldb), ldb = int(p.lda), ldc = int(p.ldc);
  {
    const InsideBlas inside;
    const int previous = host_threads != 0 ? blas.set_threads_local(host_threads) : 0;
    blas.gemm<T>()(&trans_b, &trans_a, &m, &n, &k, &p.alpha, p.b, &lda, p.a, &ldb, &p.beta, p.c,
                   &ldc, 1, 1);
    if (host_threads != 0) blas.set_threads_local(previous);
  }
  if (host_threads != 0) return host_threads;
  const int threads = blas.get_threads != nullptr ? blas.get_threads() : 1;
  return threads > 0 ? threads : 1;
}

template bool system_blas_can_run(const SystemBlas&, const GemmView<float>&, int);
template bool system_blas_can_run(const SystemBlas&, const GemmView<double>&, int);
template int system_blas_gemm(const SystemBlas&, const GemmView<float>&, int);
template int system_blas_gemm(const SystemBlas&, const GemmView<double>&, int);

}  // namespace tiledmm
