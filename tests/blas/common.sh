# Sourced by the shell-driven tests of libtiledmm_blas.
#   missing WHAT   a tool the test needs is not there: skip (exit 77, which CTest
#                  reports as skipped), or fail in CI (CI set, not false or 0), so
#                  that CI never passes by skipping
#   mpi_launch     the mpirun command line for a 2-core CI machine: loopback only,
#                  more ranks than cores, root allowed when running as root
missing() {
  case "${CI:-}" in
    "" | false | 0)
      echo "SKIP: missing $*" >&2
      exit 77
      ;;
  esac
  echo "FAIL: CI needs $*" >&2
  exit 1
}

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

mpi_launch=(mpirun --oversubscribe --bind-to none --mca btl self,vader
  --mca btl_vader_single_copy_mechanism none)
if [ "$(id -u)" -eq 0 ]; then mpi_launch+=(--allow-run-as-root); fi
