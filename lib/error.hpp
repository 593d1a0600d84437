// The one exception type of the C++ core. Every failure inside tiledmm becomes an
// Error carrying the status the C boundary returns and a message for the caller;
// lib/tiledmm_c.cpp is the only place that catches it.
#pragma once

#include <stdexcept>
#include <string>

namespace tiledmm {

enum class Status {
  InvalidValue,
  NoDevice,
  OutOfMemory,
  NotSupported,
  Cuda,
  Internal,
};

class Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  Status status() const noexcept { return status_; }

 private:
  Status status_;
};

inline void require(bool condition, Status status, const std::string& message) {
  if (!condition) throw Error(status, message);
}

}  // namespace tiledmm
