"""NumPy's float32 and float64 products through libtiledmm_blas (run by run_numpy.sh,
with the library preloaded and every call routed to tiledmm).

Checks each product against NumPy's own in a wider type (float32 against float64
within the FP32 rounding bound; float64 against longdouble within the FP64 bound),
then that the library computed them: its counters (tmm_blas_get_counters, through
ctypes) for cblas_sgemm and cblas_dgemm (Debian's NumPy calls the plain CBLAS names;
a pip wheel calls the prefixed ones, which bench/numpy_preload.py reports), and its log
("cblas_sgemm ... -> tiledmm", "cblas_dgemm ... -> tiledmm"). Exits 0 when all hold.
"""
import ctypes
import sys

import numpy as np


class Counters(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "struct_size", "tiledmm_calls", "tiledmm_flops", "fallback_calls", "fallback_flops",
        "recovered_calls", "invalid_calls", "noop_calls", "lost_calls")] + [
            ("tiledmm_max_k", ctypes.c_int64)]


# tmm_blas_routine (tiledmm/tiledmm_blas.h) of the names Debian's NumPy calls.
ROUTINES = {np.float32: ("cblas_sgemm", 1), np.float64: ("cblas_dgemm", 6)}


def counters(lib, routine):
    c = Counters()
    c.struct_size = ctypes.sizeof(Counters)
    if lib.tmm_blas_get_counters(routine, ctypes.byref(c)) != 0:
        raise SystemExit("FAIL: tmm_blas_get_counters")
    return c


def reference(a, b):
    """The product and |A||B| in a type wider than the operands': float64 for float32
    operands (each product exact, the sums' error far below FP32's bound), x87's
    80-bit longdouble for float64 ones (11 more bits than FP64: the reference's own
    error is about 2^-11 of FP64's bound; NumPy's own loop, not a BLAS)."""
    wide = np.float64 if a.dtype == np.float32 else np.longdouble
    aw, bw = a.astype(wide), b.astype(wide)
    return aw @ bw, np.abs(aw) @ np.abs(bw)


def check(name, got, a, b):
    """got must be within gamma_k |A||B| of the wider reference, in a's type."""
    ref, mag = reference(a, b)
    k = a.shape[-1]
    eps = np.finfo(a.dtype).eps
    bound = 2.0 * (k + 2) * eps * mag + 1e-300
    worst = float(np.max(np.abs(got.astype(ref.dtype) - ref) / bound))
    status = "PASS" if got.dtype == a.dtype and worst <= 1.0 else "FAIL"
    print(f"{status} {name}: {got.shape} {got.dtype}, worst error {worst:.3g} of the bound")
    return status == "PASS"


def products(dtype, rng):
    """Checks NumPy's products in dtype; returns (all passed, how many products)."""
    tag = np.dtype(dtype).name
    a = rng.standard_normal((300, 200)).astype(dtype)
    b = rng.standard_normal((200, 170)).astype(dtype)
    d = rng.standard_normal((170, 300)).astype(dtype)
    ok = True
    ok &= check(f"{tag} a @ b", a @ b, a, b)
    ok &= check(f"{tag} np.dot(a, b)", np.dot(a, b), a, b)
    ok &= check(f"{tag} a.T @ d.T (transposed views)", a.T @ d.T, a.T, d.T)
    ok &= check(f"{tag} b.T @ a.T[:, :150] (strided)", b.T @ a.T[:, :150], b.T, a.T[:, :150])
    out = np.empty((300, 170), dtype=dtype)
    np.matmul(a, b, out=out)
    ok &= check(f"{tag} np.matmul(a, b, out=out)", out, a, b)
    stack = rng.standard_normal((3, 64, 80)).astype(dtype)
    other = rng.standard_normal((3, 80, 48)).astype(dtype)
    ok &= check(f"{tag} stacked 3 x (64x80 @ 80x48)", stack @ other, stack, other)
    return ok, 5 + 3


def routed(lib, log_lines, dtype, before, count):
    """The counters and the log show tiledmm computing every product of dtype."""
    name, routine = ROUTINES[dtype]
    after = counters(lib, routine)
    on = after.tiledmm_calls - before.tiledmm_calls
    ok = True
    print(f"{name}: tiledmm {on} calls ({(after.tiledmm_flops - before.tiledmm_flops) / 1e6:.1f}"
          f" MFLOP), fallback {after.fallback_calls - before.fallback_calls}, "
          f"recovered {after.recovered_calls - before.recovered_calls}")
    if on < count or after.fallback_calls != before.fallback_calls:
        print(f"FAIL: expected tiledmm to compute all {count} {name} products")
        ok = False
    lines = [line for line in log_lines if f" {name} " in line]
    on_tiledmm = [line for line in lines if "-> tiledmm" in line]
    print(f"log: {len(on_tiledmm)} of {len(lines)} {name} lines ran on tiledmm, e.g.\n  "
          + (on_tiledmm[0].strip() if on_tiledmm else "(none)"))
    if len(on_tiledmm) < count or len(on_tiledmm) != len(lines):
        print(f"FAIL: the log does not show tiledmm computing every {name} product")
        ok = False
    return ok


def main():
    shim_path, log_path = sys.argv[1], sys.argv[2]
    lib = ctypes.CDLL(shim_path)  # the preloaded library itself (same file, same object)
    lib.tmm_blas_get_counters.restype = ctypes.c_int
    rng = np.random.default_rng(2024)
    ok = True
    counts = {}
    before = {t: counters(lib, ROUTINES[t][1]) for t in ROUTINES}
    for dtype in (np.float32, np.float64):
        passed, counts[dtype] = products(dtype, rng)
        ok &= passed
    with open(log_path, encoding="utf-8") as f:
        log_lines = f.readlines()
    for dtype in (np.float32, np.float64):
        ok &= routed(lib, log_lines, dtype, before[dtype], counts[dtype])
    print("numpy_client: " + ("all checks passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
