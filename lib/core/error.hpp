// The one exception type of the C++ core. Every failure inside tiledmm becomes an
// Error carrying the status the C boundary returns and a message for the caller;
// lib/api/tiledmm_c.cpp is the only place that catches it.
//
// require() builds its message only when the check fails: a call that passes every
// check allocates nothing (tests/test_alloc_faults.cpp counts).
#pragma once

#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

namespace tiledmm {

enum class Status {
  InvalidValue,
  NoDevice,
  OutOfMemory,
  NotSupported,
  Cuda,
  Internal,
  Callback,  // a function the caller gave failed
};

// Keeps its message in a std::string it takes by move, so throwing one allocates
// nothing beyond the exception object itself (std::runtime_error would copy the text).
class Error : public std::exception {
 public:
  Error(Status status, std::string message) : message_(std::move(message)), status_(status) {}
  Status status() const noexcept { return status_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
  Status status_;
};

namespace detail {
inline void append(std::string& s, const char* part) { s += part; }
inline void append(std::string& s, const std::string& part) { s += part; }
template <class Int, class = std::enable_if_t<std::is_integral<Int>::value>>
void append(std::string& s, Int value) {
  s += std::to_string(value);
}
}  // namespace detail

// The message from its parts (texts and integers), for the failure path.
template <class... Parts>
std::string message(const Parts&... parts) {
  std::string s;
  (detail::append(s, parts), ...);
  return s;
}

// Throws Error(status, message(parts...)). Without memory for the message it still
// throws the right status, with an empty message.
template <class... Parts>
[[noreturn]] void fail(Status status, const Parts&... parts) {
  std::string text;
  try {
    text = message(parts...);
  } catch (const std::bad_alloc&) {
  }
  throw Error(status, std::move(text));
}

// fail(status, parts...) unless `condition` holds.
template <class... Parts>
void require(bool condition, Status status, const Parts&... parts) {
  if (!condition) fail(status, parts...);
}

}  // namespace tiledmm
