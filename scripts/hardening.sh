#!/usr/bin/env bash
# The hardening checks that need no GPU; CI runs them after the tests. Each builds
# the CPU backend alone (-DTILEDMM_ENABLE_CUDA=OFF, a real option for users
# without the CUDA toolkit) with clang, in its own build folder:
#   1. ASan + UBSan: the whole test suite (with the corpus regression), then the
#      libFuzzer target for TMM_FUZZ_SECONDS (default 60) from the committed corpus
#      tests/fuzz/corpus; inputs that fail land in build-asan/fuzz-artifacts/ (add
#      one to the corpus once fixed, so that the regression test keeps it fixed);
#   2. TSan: the concurrency tests (test_threads, the lanes of a multi-device call and
#      their tile queue, and libtiledmm_blas's blas_threads
#      and blas_fork_during_config_load: TSan's pthread_once, unlike glibc's, leaves a
#      child of fork() waiting for an initialisation its parent was making);
#   3. valgrind: leaks and invalid accesses on the CPU path, without sanitizers.
# The GPU counterparts (compute-sanitizer, device faults) are in scripts/gpu-check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/env.sh
common=(-G Ninja -DTILEDMM_ENABLE_CUDA=OFF -DTILEDMM_BUILD_BINDINGS=OFF
        -DTILEDMM_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
        -DTILEDMM_WARNINGS_AS_ERRORS=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)

echo "=== ASan + UBSan"
cmake -S . -B build-asan "${common[@]}" -DTILEDMM_SANITIZE=address,undefined \
  -DTILEDMM_BUILD_FUZZERS=ON >/dev/null
cmake --build build-asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
check asan_ubsan_suite ctest --test-dir build-asan --output-on-failure
# New inputs go to a scratch folder, never into the committed corpus; crash-*,
# leak-* and timeout-* files to build-asan/fuzz-artifacts/, never the work tree.
fuzz_dir=$(mktemp -d)
artifacts=build-asan/fuzz-artifacts
mkdir -p "$artifacts"
check fuzz_sgemm build-asan/tests/fuzz/fuzz_sgemm -max_total_time="${TMM_FUZZ_SECONDS:-60}" \
  -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$artifacts/" \
  "$fuzz_dir" tests/fuzz/corpus
rm -rf "$fuzz_dir"

echo "=== TSan"
cmake -S . -B build-tsan "${common[@]}" -DTILEDMM_SANITIZE=thread >/dev/null
cmake --build build-tsan --target test_threads test_blas_threads test_system_blas test_lanes \
  test_tile_queue test_strided_batched
# The CPU backend's AUTO calls the system BLAS (OpenBLAS here), which is not
# instrumented: TSan sees its worker threads' memset and free but not the spin-waits
# that order them, and reports races that are not there. One OpenBLAS thread keeps
# the library's side of that path (its calls, the fork guard) under TSan.
export OPENBLAS_NUM_THREADS=1
check tsan_threads env TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build-tsan/tests/test_threads
# The lanes of a multi-device call and the tile queue they share (host code, own threads).
check tsan_lanes env TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build-tsan/tests/test_lanes
check tsan_tile_queue env TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  build-tsan/tests/test_tile_queue
# A strided batch on the own kernel, whole products to a thread.
check tsan_strided_batched env TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  TILEDMM_CPU_BLAS=none build-tsan/tests/test_strided_batched --gtest_filter=-*Cuda*
# Threads calling BLAS at once through libtiledmm_blas (its settings come from ctest),
# and a fork while one of them reads the settings; AUTO on the system BLAS with threads
# and forks, preloaded under libtiledmm_blas too.
check tsan_blas_threads env TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build-tsan \
  -R "^(blas_threads|blas_fork_during_config_load|test_system_blas|test_system_blas_preloaded)$" \
  --output-on-failure
unset OPENBLAS_NUM_THREADS

echo "=== valgrind"
# gcc here: valgrind 3.19 cannot read the DWARF 5 that clang 14 writes.
cmake -S . -B build-cpu "${common[@]}" -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ >/dev/null
cmake --build build-cpu --target test_api_contract test_threads test_correctness
vg=(valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=1)
# Not the sweep of extreme sizes (670,000 calls, over a minute under valgrind): the
# ASan + UBSan suite above runs it, and its checks are arithmetic and bounds.
check valgrind_contract "${vg[@]}" build-cpu/tests/test_api_contract \
  --gtest_filter='-Contract.ExtremeSizes*'
check valgrind_threads "${vg[@]}" build-cpu/tests/test_threads --gtest_filter='ThreadsCpu.HandlePerThread:ThreadsCpu.SharedHandle'
check valgrind_correctness "${vg[@]}" build-cpu/tests/test_correctness --gtest_filter='*cpu_blocked_row_NT:*cpu_naive_col_TN:*cpu_auto_row_TT'

echo "hardening: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
