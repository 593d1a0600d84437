// Parsing of the TILEDMM_BLAS_* settings. One table names every key once, with its
// parser; the environment and the file go through the same table, so they accept the
// same values. Read once, on the first BLAS call, never at load time; a child of
// fork() reads them itself when its parent was still reading them (once.hpp).
#include "support/config.hpp"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>

#include "support/log.hpp"
#include "support/once.hpp"

namespace tiledmm::blas {
namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool parse_double(const std::string& text, double& out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(v)) return false;
  out = v;
  return true;
}

bool parse_int(const std::string& text, int64_t lo, int64_t hi, int64_t& out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || v < lo || v > hi) return false;
  out = v;
  return true;
}

bool positive(const std::string& text, double& out) {
  double v = 0;
  if (!parse_double(text, v) || v <= 0) return false;
  out = v;
  return true;
}

// Each parser returns false when the value is rejected; the caller notes it.
using Apply = bool (*)(Config&, const std::string&);

bool apply_threshold(Config& c, const std::string& value) {
  const std::string v = lower(value);
  if (v == "auto") {
    c.threshold = ThresholdMode::kAuto;
  } else if (v == "all" || v == "0") {
    c.threshold = ThresholdMode::kAll;
  } else if (v == "never" || v == "none" || v == "off") {
    c.threshold = ThresholdMode::kNever;
  } else {
    double flops = 0;
    if (!parse_double(v, flops) || flops < 0) return false;
    c.threshold = flops == 0 ? ThresholdMode::kAll : ThresholdMode::kFlops;
    c.threshold_flops = flops;
  }
  return true;
}

bool apply_backend(Config& c, const std::string& value) {
  const std::string v = lower(value);
  if (v == "auto") {
    c.backend = BackendChoice::kAuto;
  } else if (v == "cuda" || v == "gpu") {
    c.backend = BackendChoice::kCuda;
  } else if (v == "cpu") {
    c.backend = BackendChoice::kCpu;
  } else {
    return false;
  }
  return true;
}

bool apply_devices(Config& c, const std::string& value) {
  std::vector<int> devices;
  size_t start = 0;
  while (start <= value.size()) {
    const size_t comma = value.find(',', start);
    const std::string item = trim(value.substr(start, comma - start));
    int64_t d = 0;
    if (!parse_int(item, 0, 4095, d)) return false;
    devices.push_back(int(d));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (devices.empty()) return false;
  c.devices = devices;
  return true;
}

// A math mode of tiledmm (TMM_OPTION_MATH_MODE): strict fp32, tf32 or fp32_accurate.
bool apply_math(Config& c, const std::string& value) {
  const std::string v = lower(value);
  tmm_math_mode mode;
  if (!math_mode_of(v, mode)) return false;
  c.math = v;
  return true;
}

bool apply_fallback(Config& c, const std::string& value) {
  c.fallback = value;
  return !value.empty();
}

bool apply_fallback64(Config& c, const std::string& value) {
  c.fallback64 = value;  // empty: no ILP64 library
  return true;
}

bool apply_log(Config& c, const std::string& value) {
  const std::string v = lower(value);
  c.log = (v == "off" || v == "0" || v == "none") ? std::string() : value;
  return true;
}

bool apply_panel(Config& c, const std::string& value) {
  int64_t v = 0;
  if (!parse_int(value, 0, int64_t(1) << 30, v)) return false;
  c.panel = v;
  return true;
}

bool apply_handles(Config& c, const std::string& value) {
  int64_t v = 0;
  if (!parse_int(value, 1, 256, v)) return false;
  c.max_handles = int(v);
  return true;
}

bool apply_host_threads(Config& c, const std::string& value) {
  int64_t v = 0;
  if (!parse_int(value, 0, 4096, v)) return false;
  c.host_threads = int(v);
  return true;
}

bool apply_keep_c(Config& c, const std::string& value) {
  const std::string v = lower(value);
  if (v == "1" || v == "on" || v == "yes" || v == "true") {
    c.keep_c = true;
  } else if (v == "0" || v == "off" || v == "no" || v == "false") {
    c.keep_c = false;
  } else {
    return false;
  }
  return true;
}

bool apply_link(Config& c, const std::string& v) { return positive(v, c.link_gbps); }
bool apply_gpu(Config& c, const std::string& v) { return positive(v, c.gpu_tflops); }
bool apply_cpu(Config& c, const std::string& v) { return positive(v, c.cpu_gflops); }
bool apply_gpu_fp64(Config& c, const std::string& v) { return positive(v, c.gpu_tflops_fp64); }
bool apply_cpu_fp64(Config& c, const std::string& v) { return positive(v, c.cpu_gflops_fp64); }
bool apply_overhead(Config& c, const std::string& v) {
  double us = 0;
  if (!parse_double(v, us) || us < 0) return false;
  c.overhead_us = us;
  return true;
}

struct Key {
  const char* env;   // the environment variable
  const char* name;  // its short name in the file
  Apply apply;
};

// TILEDMM_BLAS_CONFIG itself is not here: it names the file, so it is only read from
// the environment.
constexpr Key kKeys[] = {
    {"TILEDMM_BLAS_THRESHOLD", "threshold", apply_threshold},
    {"TILEDMM_BLAS_BACKEND", "backend", apply_backend},
    {"TILEDMM_BLAS_DEVICE", "device", apply_devices},
    {"TILEDMM_BLAS_MATH", "math", apply_math},
    {"TILEDMM_BLAS_FALLBACK", "fallback", apply_fallback},
    {"TILEDMM_BLAS_FALLBACK64", "fallback64", apply_fallback64},
    {"TILEDMM_BLAS_LOG", "log", apply_log},
    {"TILEDMM_BLAS_PANEL", "panel", apply_panel},
    {"TILEDMM_BLAS_HANDLES", "handles", apply_handles},
    {"TILEDMM_BLAS_HOST_THREADS", "host_threads", apply_host_threads},
    {"TILEDMM_BLAS_KEEP_C", "keep_c", apply_keep_c},
    {"TILEDMM_BLAS_LINK_GBPS", "link_gbps", apply_link},
    {"TILEDMM_BLAS_GPU_TFLOPS", "gpu_tflops", apply_gpu},
    {"TILEDMM_BLAS_CPU_GFLOPS", "cpu_gflops", apply_cpu},
    {"TILEDMM_BLAS_GPU_TFLOPS_FP64", "gpu_tflops_fp64", apply_gpu_fp64},
    {"TILEDMM_BLAS_CPU_GFLOPS_FP64", "cpu_gflops_fp64", apply_cpu_fp64},
    {"TILEDMM_BLAS_OVERHEAD_US", "overhead_us", apply_overhead},
};

void apply_key(Config& c, const Key& key, const char* value, const char* where,
               std::vector<std::string>& notes) {
  if (value == nullptr) return;
  const std::string v = trim(value);
  Config trial = c;
  if (key.apply(trial, v)) {
    c = trial;
    return;
  }
  if (key.apply == apply_math) {
    std::string names;
    for (const MathModeName& m : kMathModes)
      names += (names.empty() ? "" : ", ") + std::string(m.name);
    notes.push_back(std::string(where) + ": " + key.env + "=" + v +
                    " is not a math mode tiledmm has (" + names + "): keeping the default");
  } else {
    notes.push_back(std::string(where) + ": " + key.env + "=" + v +
                    " is not a valid value: keeping the default");
  }
}

}  // namespace

Config parse_config(const Lookup& env, const Lookup& file, std::vector<std::string>& notes) {
  Config c;
  for (const Key& key : kKeys) {
    const char* v = file ? file(key.env) : nullptr;
    if (v == nullptr && file) v = file(key.name);
    apply_key(c, key, v, "config file", notes);
  }
  for (const Key& key : kKeys) apply_key(c, key, env(key.env), "environment", notes);
  return c;
}

bool read_config_file(const std::string& path,
                      std::vector<std::pair<std::string, std::string>>& out,
                      std::vector<std::string>& notes) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    line = trim(line);
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    const std::string key = eq == std::string::npos ? std::string() : trim(line.substr(0, eq));
    if (key.empty()) {
      notes.push_back(path + ":" + std::to_string(number) + ": not a key = value line, ignored");
      continue;
    }
    bool known = false;
    for (const Key& k : kKeys) known = known || key == k.env || key == k.name;
    if (!known) {
      notes.push_back(path + ":" + std::to_string(number) + ": unknown key " + key + ", ignored");
      continue;
    }
    out.emplace_back(key, trim(line.substr(eq + 1)));
  }
  return true;
}

const char* threshold_name(ThresholdMode mode) {
  switch (mode) {
    case ThresholdMode::kAuto:
      return "auto";
    case ThresholdMode::kAll:
      return "all";
    case ThresholdMode::kNever:
      return "never";
    case ThresholdMode::kFlops:
      return "flops";
  }
  return "?";
}

const char* backend_name(BackendChoice backend) {
  switch (backend) {
    case BackendChoice::kAuto:
      return "auto";
    case BackendChoice::kCuda:
      return "cuda";
    case BackendChoice::kCpu:
      return "cpu";
  }
  return "?";
}

namespace {

// secure_getenv: a set-user-ID program ignores these variables (one of them names a
// library to load).
const char* env_lookup(const char* key) { return secure_getenv(key); }

Config* load() {
  std::vector<std::string> notes;
  std::vector<std::pair<std::string, std::string>> pairs;
  std::string file_path;
  if (const char* path = env_lookup("TILEDMM_BLAS_CONFIG"); path != nullptr && *path != '\0') {
    file_path = path;
    if (!read_config_file(file_path, pairs, notes))
      notes.push_back("cannot read the config file " + file_path + " (TILEDMM_BLAS_CONFIG)");
  }
  const Lookup file = [&pairs](const char* key) -> const char* {
    const char* found = nullptr;
    for (const auto& kv : pairs)
      if (kv.first == key) found = kv.second.c_str();  // the last one wins
    return found;
  };
  auto* c = new Config(parse_config(env_lookup, file, notes));
  c->config_file = file_path;
  Log::open(c->log);
  for (const std::string& note : notes) Log::note(note.c_str());
  return c;
}

}  // namespace

namespace {
ForkSafeOnce<Config> g_config;
}  // namespace

const Config& config() {
  // The fast path every BLAS call takes: one load. Never destroyed: BLAS calls may
  // come from other threads or atexit handlers while the process exits.
  return g_config.get([]() noexcept -> const Config* {
    try {
      return load();
    } catch (...) {
      static const Config defaults;  // no memory to parse: every default
      return &defaults;
    }
  });
}

bool math_mode_of(const std::string& name, tmm_math_mode& mode) {
  for (const MathModeName& m : kMathModes) {
    if (name == m.name) {
      mode = m.mode;
      return true;
    }
  }
  return false;
}

const char* math_mode_name(int64_t mode) {
  for (const MathModeName& m : kMathModes)
    if (mode == int64_t(m.mode)) return m.name;
  return nullptr;
}

}  // namespace tiledmm::blas
