// A main() for the libFuzzer target without libFuzzer: runs LLVMFuzzerTestOneInput
// once on each file named on the command line, or on every file of a directory named
// there (in name order), so that the committed corpus is a regression test in every
// build, with any compiler. The harness aborts on a failed check; this program names
// the input first, so the log says which one.
//
//   fuzz_corpus_regression tests/fuzz/corpus [more files or directories]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    if (fs::is_directory(arg)) {
      for (const fs::directory_entry& e : fs::directory_iterator(arg))
        if (e.is_regular_file()) inputs.push_back(e.path());
    } else {
      inputs.push_back(arg);
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...: no inputs found\n", argv[0]);
    return 2;
  }
  for (const fs::path& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", path.c_str());
      return 2;
    }
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                  std::istreambuf_iterator<char>()};
    std::fprintf(stderr, "%s (%zu bytes)\n", path.c_str(), bytes.size());
    // As libFuzzer does, never a NULL pointer, even for an empty input.
    static const char none = 0;
    const char* data = bytes.empty() ? &none : bytes.data();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data), bytes.size());
  }
  std::printf("%zu inputs passed\n", inputs.size());
  return 0;
}
