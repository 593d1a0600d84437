// The log of what ran where (TILEDMM_BLAS_LOG): off by default; "stderr" or a file
// path, where %p stands for the process id (never a symbolic link, nor a file of
// another user: the log then stays off). One line per BLAS call and one per
// notable event (a setting ignored, a failure recovered: each kind once), each
// written with a single write(2) to a file opened with O_APPEND, so that the lines of
// threads, forked children and MPI ranks sharing one file never interleave. Every
// line starts with "tiledmm_blas[PID] ". This is the only output the library makes.
#pragma once

#include <atomic>
#include <string>

namespace tiledmm::blas {

class Log {
 public:
  // Opens the destination; empty: the log stays off. Called once, from config().
  static void open(const char* path_or_stderr);
  static void open(const std::string& path) { open(path.c_str()); }
  static bool enabled() { return fd_.load(std::memory_order_relaxed) >= 0; }
  // A line (printf format, no newline); nothing when the log is off.
  static void line(const char* format, ...) __attribute__((format(printf, 1, 2)));
  // A note: "note: TEXT".
  static void note(const char* text);
  // True the first time it is called with this flag: for events logged once.
  static bool first(std::atomic<bool>& flag) { return !flag.exchange(true); }

 private:
  static std::atomic<int> fd_;
};

}  // namespace tiledmm::blas
