// xerbla_ and cblas_xerbla, defined by the test program (exported: ENABLE_EXPORTS), so
// that the BLAS's own error reports land here instead of printing and stopping the
// program, as a program's own xerbla would. The reference BLAS and OpenBLAS both
// call them through the PLT, so this definition wins.
#include <cstdarg>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "blas_test_util.hpp"

namespace {
std::mutex g_mutex;
std::vector<tmm_blas_test::Report> g_reports;

void record(bool cblas, const char* name, size_t length, int info) {
  std::string routine(name, length);
  while (!routine.empty() && (routine.back() == ' ' || routine.back() == '\0')) routine.pop_back();
  std::lock_guard<std::mutex> lock(g_mutex);
  g_reports.push_back({cblas, routine, info});
}
}  // namespace

namespace tmm_blas_test {
std::vector<Report> take_reports() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<Report> out;
  out.swap(g_reports);
  return out;
}
}  // namespace tmm_blas_test

extern "C" {
// The info argument is an INTEGER: 4 bytes from an LP64 BLAS, 8 from an ILP64 one;
// values here are small and positive, so the low 4 bytes (x86-64) carry them.
void xerbla_(const char* name, const int* info, size_t length) {
  size_t n = 0;
  while (n < length && n < 32 && name[n] != '\0') ++n;
  record(false, name, n, *info);
}

void cblas_xerbla(int info, const char* routine, const char* format, ...) {
  (void)format;
  record(true, routine, std::strlen(routine), info);
}
}
