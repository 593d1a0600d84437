// main() of every GoogleTest program in tests/ (in place of GTest::gtest_main): the
// same run, then an exit status that tells CTest what happened, so that a program
// whose tests were all skipped never reads as passed:
//   a failure                      1, as before (ctest: Failed);
//   every test that ran skipped    77, which each ctest entry's SKIP_RETURN_CODE turns
//                                  into "Skipped" (the CUDA suites without a GPU, a
//                                  conformance run without its BLAS);
//   some passed, others skipped    0 (ctest: Passed): what could run, ran. Where the
//                                  skipped ones are the GPU tests of a program that
//                                  also has host tests, tests/CMakeLists.txt gives
//                                  them a ctest entry of their own, which then reads
//                                  Skipped; other skips (a kernel this GPU lacks, a
//                                  test too large for compute-sanitizer) stay inside
//                                  a passed entry, counted on its last line;
//   no test selected               1: an entry whose filter matches nothing proves
//                                  nothing.
// The last line counts the skipped tests by reason (ctest -V, and
// Testing/Temporary/LastTest.log). --gtest_list_tests exits as GoogleTest says.
//
// Why not "Skipped" for any skip: the scripts that run these programs directly
// (scripts/hardening.sh runs all of test_threads under TSan on a CPU build) count
// any status but 0 as a failure, and a passed entry that says how many it skipped,
// and why, is what a reader of a partial run needs.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

namespace {

// The reason a skipped test gave (GTEST_SKIP() << reason), its first line.
std::string skip_reason(const ::testing::TestResult& result) {
  for (int i = 0; i < result.total_part_count(); ++i) {
    const ::testing::TestPartResult& part = result.GetTestPartResult(i);
    if (!part.skipped()) continue;
    const std::string message = part.message();
    const std::string line = message.substr(0, message.find('\n'));
    return line.empty() ? "no reason given" : line;
  }
  return "no reason given";
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  if (GTEST_FLAG_GET(list_tests)) return status;

  const ::testing::UnitTest& run = *::testing::UnitTest::GetInstance();
  std::map<std::string, int> reasons;
  for (int s = 0; s < run.total_test_suite_count(); ++s) {
    const ::testing::TestSuite& suite = *run.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const ::testing::TestInfo& test = *suite.GetTestInfo(t);
      if (test.should_run() && test.result()->Skipped()) ++reasons[skip_reason(*test.result())];
    }
  }
  const int passed = run.successful_test_count(), skipped = run.skipped_test_count();
  std::string why;
  for (const auto& [reason, count] : reasons)
    why += (why.empty() ? " (" : "; ") + std::to_string(count) + ": " + reason;
  if (!why.empty()) why += ")";
  std::printf("[ SUMMARY  ] %d passed, %d skipped%s, %d failed, of %d tests run\n", passed, skipped,
              why.c_str(), run.failed_test_count(), run.test_to_run_count());
  if (status != 0) return status;
  if (run.test_to_run_count() == 0) {
    std::printf("[ SUMMARY  ] no test selected: nothing was tested\n");
    return 1;
  }
  if (passed == 0 && skipped > 0) {
    std::printf("[ SUMMARY  ] every test skipped: exit status 77 (ctest: Skipped)\n");
    return 77;
  }
  return 0;
}
