// The streamed host path: a product on host memory cut into tiles (stream_plan.hpp)
// that flow through one device, copies overlapped with compute, so that any
// product whose matrices fit in host memory runs, whatever the device has.
//
// Per step the host packs the next chunk of op(A) (or op(B), or a tile of C) from
// the caller's memory into pinned staging with the handle's worker threads, in the
// layout the operand is stored in (so each row is one memcpy, whatever the
// transposes and leading dimensions), while the device uploads the previous chunk
// on one stream and multiplies the one before on another; finished tiles of C come
// back on a third stream and are unpacked into the caller's C, m x n part only.
// Two slots of everything, ordered by events; the host waits only for the copy that
// last used the staging slot it is about to refill. Every allocation happens before
// the first write to C.
#pragma once

#include <memory>

#include "../backend.hpp"
#include "../device_profile.hpp"
#include "../worker_pool.hpp"
#include "stream_plan.hpp"

namespace tiledmm {

class StreamedGemm {
 public:
  StreamedGemm();  // with the device current: its streams and events
  ~StreamedGemm();
  StreamedGemm(const StreamedGemm&) = delete;
  StreamedGemm& operator=(const StreamedGemm&) = delete;

  // Runs `p` (host pointers; a call that reads A and B) as `plan` cuts it. Throws
  // Error(OutOfMemory) before writing C if a buffer cannot be had; a CUDA error after
  // C tiles were written leaves C undefined (documented in the header).
  Timing run(const GemmProblem& p, const Settings& settings, const DeviceProfile& device,
             const StreamPlan& plan, WorkerPool& pool);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tiledmm
