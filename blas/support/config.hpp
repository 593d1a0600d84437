// The settings of libtiledmm_blas: what the environment variables TILEDMM_BLAS_* and
// the optional key = value file (TILEDMM_BLAS_CONFIG) say, parsed once per process,
// lazily, on the first BLAS call. A value that does not parse keeps its default and
// leaves a note, which goes to the log once the log is open (the library never
// prints otherwise). include/tiledmm/tiledmm_blas.h documents every key.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tiledmm/tiledmm.h"

namespace tiledmm::blas {

enum class ThresholdMode {
  kAuto,   // the cost model decides per call (route/cost_model.hpp)
  kAll,    // every call with work in it goes to tiledmm (tests use this)
  kNever,  // every call goes to the fallback BLAS
  kFlops   // calls of at least threshold_flops go to tiledmm
};

enum class BackendChoice { kAuto, kCuda, kCpu };

struct Config {
  ThresholdMode threshold = ThresholdMode::kAuto;
  double threshold_flops = 0;  // kFlops only
  BackendChoice backend = BackendChoice::kAuto;
  std::vector<int> devices{0};  // CUDA device indices, picked by local MPI rank
  std::string math;      // a name of kMathModes; empty: the library's default (TMM_MATH_MODE)
  std::string fallback;  // empty: search (fallback.cpp)
  std::string fallback64 = "libblas64.so.3";  // ILP64 library, when the first has no *64_
  std::string log;                            // empty: off; "stderr" or a path (%p: pid)
  int64_t panel = 4096;  // pilaenv_ answer for single and double precision when tiledmm is on
  int max_handles = 0;   // tiledmm handles at once; 0: 2 per device in `devices` (2 in all
                         // where each handle spans the devices: route/engine.hpp)
  int host_threads = 0;  // TMM_OPTION_HOST_THREADS of each handle; 0: library default
  bool keep_c = true;    // copy C before a routed beta != 0 call, to recompute on a fault
  // Cost model inputs; 0 (overhead: negative) means "derive it" (route/cost_model.hpp).
  double link_gbps = 0;
  double gpu_tflops = 0;
  double cpu_gflops = 0;
  double gpu_tflops_fp64 = 0;  // double precision's GPU and CPU rates
  double cpu_gflops_fp64 = 0;
  double overhead_us = -1;
  std::string config_file;  // the file that was read, if any
};

// Looks a key up; nullptr when absent.
using Lookup = std::function<const char*(const char* key)>;

// Builds a configuration: `file` first (keys as in the environment, or their short
// lower-case names), then `env`, which wins. Notes say what was ignored and why.
Config parse_config(const Lookup& env, const Lookup& file, std::vector<std::string>& notes);

// Reads a key = value file into pairs (# starts a comment). False if it cannot be
// opened; lines that are not key = value leave a note.
bool read_config_file(const std::string& path,
                      std::vector<std::pair<std::string, std::string>>& out,
                      std::vector<std::string>& notes);

// The process's configuration, read on first use (thread-safe), with the notes it
// left in the log.
const Config& config();

// Human-readable names, for the log and tmm_blas_describe.
const char* threshold_name(ThresholdMode mode);
const char* backend_name(BackendChoice backend);

// tiledmm's math modes (TMM_OPTION_MATH_MODE) by the names TILEDMM_BLAS_MATH takes,
// the log and tmm_blas_describe print: the one table of them.
struct MathModeName {
  const char* name;
  tmm_math_mode mode;
};
inline constexpr MathModeName kMathModes[] = {
    {"fp32", TMM_MATH_FP32}, {"tf32", TMM_MATH_TF32}, {"fp32_accurate", TMM_MATH_FP32_ACCURATE}};

// The mode of a name of kMathModes (lower case); false for any other name.
bool math_mode_of(const std::string& name, tmm_math_mode& mode);
// The name of a mode; nullptr for a value that is none.
const char* math_mode_name(int64_t mode);

}  // namespace tiledmm::blas
