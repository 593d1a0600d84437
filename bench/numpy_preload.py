#!/usr/bin/env python3
"""NumPy (and SciPy) with and without libtiledmm_blas preloaded, unchanged code.

For each precision (float64 and float32 by default) at n x n x n (default 8192) it times
`a @ b` on random data in two subprocesses: NumPy alone, at its default thread count
(logged: threadpoolctl if present, else numpy.show_config's BLAS and os.cpu_count and
OPENBLAS_NUM_THREADS), and with LD_PRELOAD=LIB. Each times one warm-up and then
--reps products and reports the median. The preloaded product is checked against
NumPy's own on sampled rows (relative Frobenius error within 8 sqrt(k) eps of the
precision), and the library's counters (tmm_blas_get_counters through ctypes) say
which entry points were called and where they ran: a pip wheel's NumPy calls
scipy_cblas_dgemm64_ / scipy_cblas_sgemm64_, Debian's calls cblas_dgemm / cblas_sgemm.
If SciPy imports, scipy.linalg.blas.dgemm / sgemm (a SciPy wheel: scipy_dgemm_ /
scipy_sgemm_, the LP64 names) are timed and checked the same way. `a @ b` is also timed
into an output array written before (np.matmul's out=), which leaves out the cost of
faulting in the fresh result's pages.

  python3 bench/numpy_preload.py --lib build/blas/libtiledmm_blas.so.1 [--n 8192]
      [--reps 3] [--dtypes float64,float32] [--no-scipy] [--env KEY=VALUE ...]

--env passes settings to the preloaded side only, e.g. a smoke test on a machine
without a GPU: --n 512 --env TILEDMM_BLAS_THRESHOLD=all --env TILEDMM_BLAS_BACKEND=cpu.
Exits 1 when a check fails or the preloaded side's products did not run on tiledmm.
"""
import argparse
import ctypes
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout

# tmm_blas_routine (tiledmm/tiledmm_blas.h), in order.
ROUTINES = ["sgemm_", "cblas_sgemm", "sgemm_64_", "cblas_sgemm64_", "pilaenv_", "dgemm_",
            "cblas_dgemm", "dgemm_64_", "cblas_dgemm64_", "scipy_sgemm_", "scipy_cblas_sgemm",
            "scipy_sgemm_64_", "scipy_cblas_sgemm64_", "scipy_dgemm_", "scipy_cblas_dgemm",
            "scipy_dgemm_64_", "scipy_cblas_dgemm64_"]
SAMPLE_ROWS = 64


class Counters(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in (
        "struct_size", "tiledmm_calls", "tiledmm_flops", "fallback_calls", "fallback_flops",
        "recovered_calls", "invalid_calls", "noop_calls", "lost_calls")] + [
            ("tiledmm_max_k", ctypes.c_int64)]


def library_counters():
    """Every routine's counters with a call, or None when the library is not loaded."""
    try:
        get = ctypes.CDLL(None).tmm_blas_get_counters
    except (AttributeError, OSError):
        return None
    out = {}
    for i, name in enumerate(ROUTINES):
        c = Counters()
        c.struct_size = ctypes.sizeof(Counters)
        if get(i, ctypes.byref(c)) != 0:
            continue
        if c.tiledmm_calls or c.fallback_calls or c.invalid_calls or c.noop_calls:
            out[name] = {"tiledmm": c.tiledmm_calls, "fallback": c.fallback_calls,
                         "recovered": c.recovered_calls, "lost": c.lost_calls}
    return out


def thread_info(np):
    """NumPy's BLAS and its thread count, as far as this process can tell."""
    info = {"cpu_count": os.cpu_count(),
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "(unset)"),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "(unset)")}
    try:
        import threadpoolctl  # pylint: disable=import-outside-toplevel
        info["threadpoolctl"] = [
            {k: p.get(k) for k in ("internal_api", "prefix", "version", "num_threads",
                                   "filepath")} for p in threadpoolctl.threadpool_info()]
    except ImportError:
        text = io.StringIO()
        try:
            with redirect_stdout(text):
                np.show_config()
        except Exception:  # pylint: disable=broad-except
            pass
        blas = [line.strip() for line in text.getvalue().splitlines()
                if any(w in line.lower() for w in ("openblas", "blas", "name:", "version"))]
        info["numpy.show_config"] = blas[:12]
    return info


def child(args):
    """One side: times the products, saves sampled rows, prints a JSON summary."""
    import numpy as np  # pylint: disable=import-outside-toplevel
    dtype = np.dtype(args.dtype)
    n = args.n
    rng = np.random.default_rng(args.seed)
    a = rng.standard_normal((n, n), dtype=np.float64).astype(dtype)
    b = rng.standard_normal((n, n), dtype=np.float64).astype(dtype)
    rows = np.sort(rng.choice(n, size=min(SAMPLE_ROWS, n), replace=False))
    summary = {"numpy": np.__version__, "threads": thread_info(np), "dtype": dtype.name, "n": n}
    samples = {}

    def timed(name, fn):
        fn()  # warm-up (the preloaded side starts tiledmm here)
        times = []
        for _ in range(args.reps):
            start = time.perf_counter()
            c = fn()
            times.append(time.perf_counter() - start)
        samples[name] = np.asarray(c)[rows, :]
        summary[name] = {"times_s": times, "median_s": statistics.median(times)}

    timed("matmul", lambda: a @ b)
    # The same into an output already written once: a @ b returns a fresh array, whose
    # pages the library's first writes fault in; this separates that cost.
    out_c = np.zeros((n, n), dtype=dtype)
    timed("matmul_out", lambda: np.matmul(a, b, out=out_c))
    if not args.no_scipy:
        try:
            from scipy.linalg import blas  # pylint: disable=import-outside-toplevel
            import scipy  # pylint: disable=import-outside-toplevel
            gemm = blas.dgemm if dtype == np.float64 else blas.sgemm
            af, bf = np.asfortranarray(a), np.asfortranarray(b)
            timed("scipy", lambda: gemm(1.0, af, bf))
            summary["scipy_version"] = scipy.__version__
        except ImportError as e:
            summary["scipy_skipped"] = f"SciPy does not import: {e}"
    summary["counters"] = library_counters()
    np.savez(args.out, **samples)
    print(json.dumps(summary))


def run_side(args, dtype, preload, workdir):
    out = os.path.join(workdir, f"{dtype}-{'preload' if preload else 'alone'}.npz")
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = os.path.abspath(args.lib)
        for kv in args.env:
            key, _, value = kv.partition("=")
            env[key] = value
    cmd = [args.python, os.path.abspath(__file__), "--child", "--dtype", dtype, "--n", str(args.n),
           "--reps", str(args.reps), "--seed", str(args.seed), "--out", out]
    if args.no_scipy:
        cmd.append("--no-scipy")
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"FAIL: the {'preloaded' if preload else 'NumPy-alone'} {dtype} side "
                         f"exited {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1]), out


def compare(np, dtype, n, ours, theirs):
    """Relative Frobenius error of sampled rows, and its bound: 8 sqrt(k) eps."""
    x, y = ours.astype(np.float64), theirs.astype(np.float64)
    err = float(np.linalg.norm(x - y) / np.linalg.norm(y))
    return err, 8.0 * (n ** 0.5) * float(np.finfo(dtype).eps)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    p.add_argument("--lib", help="libtiledmm_blas.so to preload")
    p.add_argument("--n", type=int, default=8192)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--dtypes", default="float64,float32")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--env", action="append", default=[], help="KEY=VALUE for the preloaded side")
    p.add_argument("--no-scipy", action="store_true")
    p.add_argument("--python", default=sys.executable, help="the Python whose NumPy is timed")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--dtype", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args)
        return 0
    if not args.lib or not os.path.exists(args.lib):
        p.error("--lib must name libtiledmm_blas.so")
    import numpy as np  # pylint: disable=import-outside-toplevel
    ok = True
    flops = 2.0 * args.n ** 3
    with tempfile.TemporaryDirectory() as workdir:
        for dtype in args.dtypes.split(","):
            alone, alone_out = run_side(args, dtype, False, workdir)
            pre, pre_out = run_side(args, dtype, True, workdir)
            if dtype == args.dtypes.split(",")[0]:
                print(f"NumPy {alone['numpy']} ({args.python}); NumPy alone's BLAS and threads: "
                      + json.dumps(alone["threads"]))
            print(f"== {dtype} n={args.n}, median of {args.reps} after a warm-up"
                  + (f"; preloaded side's settings: {' '.join(args.env)}" if args.env else ""))
            with np.load(alone_out) as ref, np.load(pre_out) as got:
                for op in ("matmul", "matmul_out", "scipy"):
                    if op not in alone or op not in pre:
                        continue
                    t0, t1 = alone[op]["median_s"], pre[op]["median_s"]
                    err, bound = compare(np, np.dtype(dtype), args.n, got[op], ref["matmul"])
                    passed = err <= bound
                    ok &= passed
                    prefix = "d" if dtype == "float64" else "s"
                    label = {"matmul": "a @ b", "matmul_out": "matmul(a, b, out=c), c written before"
                             }.get(op, f"scipy.linalg.blas.{prefix}gemm")
                    print(f"{label}: NumPy alone {t0 * 1e3:.1f} ms ({flops / t0 / 1e12:.3f} TFLOP/s), "
                          f"preloaded {t1 * 1e3:.1f} ms ({flops / t1 / 1e12:.3f} TFLOP/s): "
                          f"{t0 / t1:.2f}x; error vs NumPy's own {err:.2e} (bound {bound:.1e}): "
                          f"{'PASS' if passed else 'FAIL'}")
            if "scipy_skipped" in pre:
                print(pre["scipy_skipped"])
            counters = pre.get("counters")
            if counters is None:
                print("FAIL: libtiledmm_blas was not loaded on the preloaded side")
                ok = False
                continue
            print("library counters (preloaded side): " + json.dumps(counters))
            gemm = {k: v for k, v in counters.items() if k != "pilaenv_"}
            routed = sum(v["tiledmm"] for v in gemm.values())
            names = ", ".join(f"{k} ({v['tiledmm']} on tiledmm, {v['fallback']} on the fallback)"
                              for k, v in gemm.items())
            wheel = any(k.startswith("scipy_") for k in gemm)
            print(f"path: {names or 'no GEMM call reached the library'}; "
                  + ("a wheel's prefixed names" if wheel else "the standard names"))
            if routed == 0:
                print("FAIL: no product ran on tiledmm")
                ok = False
    print("numpy_preload: " + ("all checks passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
