// The log sink: a file descriptor written with one write(2) per line (log.hpp).
#include "log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

namespace tiledmm::blas {

std::atomic<int> Log::fd_{-1};

void Log::open(const char* path) {
  if (path == nullptr || *path == '\0') return;
  if (std::strcmp(path, "stderr") == 0) {
    fd_.store(STDERR_FILENO);
    return;
  }
  std::string name;
  for (const char* p = path; *p != '\0'; ++p) {
    if (p[0] == '%' && p[1] == 'p') {
      name += std::to_string(getpid());
      ++p;
    } else {
      name += *p;
    }
  }
  const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  fd_.store(fd);  // -1 when it cannot be opened: the log stays off, silently
}

void Log::line(const char* format, ...) {
  const int fd = fd_.load(std::memory_order_relaxed);
  if (fd < 0) return;
  char buffer[1024];
  int used = std::snprintf(buffer, sizeof buffer, "tiledmm_blas[%ld] ", long(getpid()));
  if (used < 0) return;
  va_list args;
  va_start(args, format);
  const int more = std::vsnprintf(buffer + used, sizeof buffer - size_t(used) - 1, format, args);
  va_end(args);
  if (more < 0) return;
  used = std::min<int>(used + more, int(sizeof buffer) - 2);
  buffer[used++] = '\n';
  // One write per line: O_APPEND keeps lines of other threads and processes whole.
  ssize_t ignored = ::write(fd, buffer, size_t(used));
  (void)ignored;
}

void Log::note(const char* text) { line("note: %s", text); }

}  // namespace tiledmm::blas
