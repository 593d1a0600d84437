// What the CUDA graph tests share (test_graph_capture.cpp, test_device_scalars.cpp): a
// handle with the stream it runs on, and the closing of a capture a failed assertion
// left open.
#pragma once

#include <cuda_runtime.h>

#include "tiledmm/tiledmm.h"

namespace tmm_test {

// A handle and the stream it runs on, destroyed in that order at scope exit.
struct HandleAndStream {
  tmm_handle h = nullptr;
  cudaStream_t s = nullptr;
  HandleAndStream() = default;
  ~HandleAndStream() {
    tmm_destroy(h);
    if (s != nullptr) cudaStreamDestroy(s);
  }
  HandleAndStream(const HandleAndStream&) = delete;
  HandleAndStream& operator=(const HandleAndStream&) = delete;
};

// Ends a capture still open when the test leaves (a failed assertion), so that the
// next test's allocations are not refused.
struct CaptureCloser {
  cudaStream_t s;
  ~CaptureCloser() {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &status) != cudaSuccess || status == cudaStreamCaptureStatusNone)
      return;
    cudaGraph_t graph = nullptr;
    cudaStreamEndCapture(s, &graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
  }
};

}  // namespace tmm_test
