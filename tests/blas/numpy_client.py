"""NumPy's float32 products through libtiledmm_blas (run by run_numpy.sh, with the
library preloaded and every call routed to tiledmm).

Checks each product against float64 NumPy within the FP32 rounding bound, then that
the library computed them: its counters (tmm_blas_get_counters, through ctypes) and
its log ("cblas_sgemm ... -> tiledmm"). Exits 0 when all hold.
"""
import ctypes
import sys

import numpy as np


class Counters(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "struct_size", "tiledmm_calls", "tiledmm_flops", "fallback_calls", "fallback_flops",
        "recovered_calls", "invalid_calls", "noop_calls", "lost_calls")] + [
            ("tiledmm_max_k", ctypes.c_int64)]


TMM_BLAS_CBLAS_SGEMM = 1


def counters(lib):
    c = Counters()
    c.struct_size = ctypes.sizeof(Counters)
    if lib.tmm_blas_get_counters(TMM_BLAS_CBLAS_SGEMM, ctypes.byref(c)) != 0:
        raise SystemExit("FAIL: tmm_blas_get_counters")
    return c


def check(name, got, a, b):
    """got must be within gamma_k |A||B| of the float64 product."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = a64 @ b64
    k = a.shape[-1]
    bound = 2.0 * (k + 2) * np.finfo(np.float32).eps * (np.abs(a64) @ np.abs(b64)) + 1e-30
    worst = float(np.max(np.abs(got.astype(np.float64) - ref) / bound))
    status = "PASS" if got.dtype == np.float32 and worst <= 1.0 else "FAIL"
    print(f"{status} {name}: {got.shape} {got.dtype}, worst error {worst:.3g} of the bound")
    return status == "PASS"


def main():
    shim_path, log_path = sys.argv[1], sys.argv[2]
    lib = ctypes.CDLL(shim_path)  # the preloaded library itself (same file, same object)
    lib.tmm_blas_get_counters.restype = ctypes.c_int
    before = counters(lib)
    rng = np.random.default_rng(2024)
    a = rng.standard_normal((300, 200), dtype=np.float32)
    b = rng.standard_normal((200, 170), dtype=np.float32)
    d = rng.standard_normal((170, 300), dtype=np.float32)
    ok = True
    ok &= check("a @ b", a @ b, a, b)
    ok &= check("np.dot(a, b)", np.dot(a, b), a, b)
    ok &= check("a.T @ d.T (transposed views)", a.T @ d.T, a.T, d.T)
    ok &= check("b.T @ a.T[:, :150] (strided)", b.T @ a.T[:, :150], b.T, a.T[:, :150])
    out = np.empty((300, 170), dtype=np.float32)
    np.matmul(a, b, out=out)
    ok &= check("np.matmul(a, b, out=out)", out, a, b)
    stack = rng.standard_normal((3, 64, 80), dtype=np.float32)
    other = rng.standard_normal((3, 80, 48), dtype=np.float32)
    ok &= check("stacked 3 x (64x80 @ 80x48)", stack @ other, stack, other)
    products = 5 + 3

    after = counters(lib)
    routed = after.tiledmm_calls - before.tiledmm_calls
    print(f"cblas_sgemm: tiledmm {routed} calls ({after.tiledmm_flops / 1e6:.1f} MFLOP), "
          f"fallback {after.fallback_calls - before.fallback_calls}, "
          f"recovered {after.recovered_calls - before.recovered_calls}")
    if routed < products or after.fallback_calls != before.fallback_calls:
        print(f"FAIL: expected tiledmm to compute all {products} products")
        ok = False
    with open(log_path, encoding="utf-8") as f:
        lines = [line for line in f if " cblas_sgemm " in line]
    on_tiledmm = [line for line in lines if "-> tiledmm" in line]
    print(f"log: {len(on_tiledmm)} of {len(lines)} cblas_sgemm lines ran on tiledmm, e.g.\n  "
          + (on_tiledmm[0].strip() if on_tiledmm else "(none)"))
    if len(on_tiledmm) < products or len(on_tiledmm) != len(lines):
        print("FAIL: the log does not show tiledmm computing every product")
        ok = False
    print("numpy_client: " + ("all checks passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
