// The log sink: a file descriptor written with one write(2) per line (log.hpp).
#include "support/log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
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
  // The path may lie in a directory others can write (/tmp): a symbolic link there
  // (O_NOFOLLOW), or a file another user made, could make the library append to a
  // file of someone else's choosing, so neither is used. O_NONBLOCK: a FIFO without
  // a reader fails here instead of holding the first BLAS call; the writes block as
  // before.
  int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                  0644);
  struct stat st {};
  if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_uid != geteuid())) {
    ::close(fd);
    fd = -1;
  }
  if (fd >= 0) {
    const int flags = fcntl(fd, F_GETFL);
    if (flags != -1) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  fd_.store(fd);  // -1 when it cannot be opened or is refused: the log stays off, silently
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
