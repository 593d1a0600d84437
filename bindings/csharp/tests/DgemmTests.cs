// Engine.Dgemm on the CPU backend, test for test the double twin of EngineTests.cs's
// Sgemm tests: results (every layout and transpose, offsets, padding, both overloads),
// every argument error (before native code runs), threads, and the report's precision.
// The results are checked so that a float-rounded result fails: integer inputs up to
// 2^20, whose products and sums double holds exactly, are compared for equality; random
// inputs in [-1, 1] within a few double ulps per term. DgemmFloatResultsFailTheCheck
// proves that the checks tell the two apart.
using System;
using System.Collections.Generic;
using System.Threading;
using TiledMM;

static partial class EngineTests
{
    enum Fill
    {
        // Integers in [-2^20, 2^20]: every product (< 2^40) and sum (k <= 129: < 2^48) is
        // exact in double, in any order of summation, and so is alpha * sum + beta * c for
        // the alphas and betas used with them (multiples of 1/4). Float rounds the products.
        Integers,
        // Uniform in [-1, 1], compared within (k + 2) double ulps per term, twice.
        Unit
    }

    // A random Dgemm call, its arrays (with padding and offsets) and its reference.
    sealed class DCase
    {
        public Fill Fill; public Layout L; public Transpose Ta, Tb; public int M, N, K, Offset;
        public double Alpha, Beta; public long Lda, Ldb, Ldc; public double[] A, B, C, C0;

        public DCase(Fill fill, Layout l, Transpose ta, Transpose tb, int m, int n, int k, double alpha,
                     double beta, int pad, int offset)
        {
            Fill = fill; L = l; Ta = ta; Tb = tb; M = m; N = n; K = k; Alpha = alpha; Beta = beta;
            Offset = offset;
            bool row = l == Layout.RowMajor;
            int ar = ta == Transpose.Trans ? k : m, ac = ta == Transpose.Trans ? m : k;
            int br = tb == Transpose.Trans ? n : k, bc = tb == Transpose.Trans ? k : n;
            Lda = Math.Max(1, row ? ac : ar) + pad;
            Ldb = Math.Max(1, row ? bc : br) + pad;
            Ldc = Math.Max(1, row ? n : m) + pad;
            A = Random(fill, offset + (int)(Math.Max(1, row ? ar : ac) * Lda));
            B = Random(fill, offset + (int)(Math.Max(1, row ? br : bc) * Ldb));
            C = Random(fill, offset + (int)(Math.Max(1, row ? m : n) * Ldc));
            C0 = (double[])C.Clone();
        }

        public DCase(Layout l, Transpose ta, Transpose tb, int m, int n, int k, double alpha, double beta,
                     int pad, int offset) : this(Fill.Unit, l, ta, tb, m, n, k, alpha, beta, pad, offset) { }

        public static double[] Random(Fill fill, int size)
        {
            var x = new double[size];
            for (int i = 0; i < size; i++)
                x[i] = fill == Fill.Integers ? Rng.Next(-(1 << 20), (1 << 20) + 1) : Rng.NextDouble() * 2 - 1;
            return x;
        }

        public int At(int r, int c, long ld) => Offset + (int)(L == Layout.RowMajor ? r * ld + c : c * ld + r);
        double OpA(int i, int q) => Ta == Transpose.Trans ? A[At(q, i, Lda)] : A[At(i, q, Lda)];
        double OpB(int q, int j) => Tb == Transpose.Trans ? B[At(j, q, Ldb)] : B[At(q, j, Ldb)];

        public void Run(Engine e) =>
            e.Dgemm(L, Ta, Tb, M, N, K, Alpha, A, Offset, Lda, B, Offset, Ldb, Beta, C, Offset, Ldc);

        public void Verify() => Verify(C);

        // Checks got (C, or a stand-in for it) against the reference, and that nothing
        // outside the m x n part was written.
        public void Verify(double[] got)
        {
            double eps = Math.Pow(2, -52);
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++)
                {
                    double dot = 0, mag = 0;
                    for (int q = 0; q < K; q++) { dot += OpA(i, q) * OpB(q, j); mag += Math.Abs(OpA(i, q) * OpB(q, j)); }
                    double old = C0[At(i, j, Ldc)];
                    double scaled = Beta == 0 ? 0 : Beta * old;  // Beta = 0: C is not read
                    double reference = Alpha * dot + scaled;
                    double bound = Fill == Fill.Integers ? 0
                        : 2 * (K + 2) * eps * (Math.Abs(Alpha) * mag + Math.Abs(scaled)) + 1e-300;
                    double value = got[At(i, j, Ldc)];
                    if (!(Math.Abs(value - reference) <= bound))
                        throw new Exception($"C({i},{j}) = {value:R}, expected {reference:R} ({Fill}, bound {bound})");
                }
            var inside = new bool[got.Length];
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) inside[At(i, j, Ldc)] = true;
            for (int x = 0; x < got.Length; x++)
                if (!inside[x] && BitConverter.DoubleToInt64Bits(got[x]) != BitConverter.DoubleToInt64Bits(C0[x]))
                    throw new Exception($"c[{x}], outside the m x n part, was written");
        }
    }

    static void AssertRanInDouble(Engine e)
    {
        Report r = e.LastReport;
        Assert(r.Precision == Precision.Double, "a double product: " + r);
        Assert(r.MathMode == MathMode.Fp32, "strict, in its precision: " + r);
    }

    static void DgemmMatchesTheReference()
    {
        int[][] shapes = { new[] { 1, 1, 1 }, new[] { 7, 13, 11 }, new[] { 33, 17, 65 }, new[] { 100, 37, 129 } };
        using (var e = new Engine(Backend.Cpu, 0))
            foreach (Algorithm algo in new[] { Algorithm.Auto, Algorithm.Blocked, Algorithm.Naive })
            {
                e.Algorithm = algo;
                string kernel = algo == Algorithm.Naive ? "cpu_f64_naive" : "cpu_f64_blocked";
                foreach (Fill fill in new[] { Fill.Integers, Fill.Unit })
                    foreach (Layout l in new[] { Layout.RowMajor, Layout.ColMajor })
                        foreach (Transpose ta in new[] { Transpose.NoTrans, Transpose.Trans })
                            foreach (Transpose tb in new[] { Transpose.NoTrans, Transpose.Trans })
                                foreach (int[] s in shapes)
                                {
                                    var plain = new DCase(fill, l, ta, tb, s[0], s[1], s[2], 1, 0, 0, 0);
                                    plain.Run(e); plain.Verify();
                                    AssertRanInDouble(e);
                                    // AUTO may run the system BLAS instead of the own kernels.
                                    Assert(e.LastReport.Kernel == kernel ||
                                               (algo == Algorithm.Auto && e.LastReport.Kernel.StartsWith("system BLAS (")),
                                           kernel + ": " + e.LastReport);
                                    // Random inputs also take an alpha and a beta float cannot hold.
                                    double alpha = fill == Fill.Unit ? -0.3 : -0.5, beta = fill == Fill.Unit ? 1.1 : 1.25;
                                    var padded = new DCase(fill, l, ta, tb, s[0], s[1], s[2], alpha, beta, 3, 5);
                                    padded.Run(e); padded.Verify();
                                    AssertRanInDouble(e);
                                }
                // The overload without offsets.
                var g = new DCase(Fill.Integers, Layout.ColMajor, Transpose.Trans, Transpose.NoTrans, 12, 10, 21, 2, -1, 1, 0);
                e.Dgemm(g.L, g.Ta, g.Tb, g.M, g.N, g.K, g.Alpha, g.A, g.Lda, g.B, g.Ldb, g.Beta, g.C, g.Ldc);
                g.Verify();
                AssertRanInDouble(e);
            }
    }

    // The checks above reject what a float product of the same call would give.
    static void DgemmFloatResultsFailTheCheck()
    {
        using (var e = new Engine(Backend.Cpu, 0))
        {
            foreach (Fill fill in new[] { Fill.Integers, Fill.Unit })
            {
                var g = new DCase(fill, Layout.RowMajor, Transpose.NoTrans, Transpose.Trans, 9, 8, 33, -0.5, 1.25, 2, 3);
                g.Run(e); g.Verify();
                var rounded = (double[])g.C.Clone();  // its m x n part rounded to float
                for (int i = 0; i < g.M; i++)
                    for (int j = 0; j < g.N; j++) rounded[g.At(i, j, g.Ldc)] = (float)rounded[g.At(i, j, g.Ldc)];
                int changed = 0;
                for (int x = 0; x < rounded.Length; x++) changed += rounded[x] != g.C[x] ? 1 : 0;
                Assert(changed > 0, fill + ": rounding to float changed no element (are the inputs random?)");
                Throws<Exception>(() => g.Verify(rounded), fill + ", rounded to float");
            }
            // The library's own Sgemm of the integer case (its inputs are floats exactly).
            var h = new DCase(Fill.Integers, Layout.ColMajor, Transpose.Trans, Transpose.NoTrans, 9, 8, 33, -0.5, 1.25, 2, 3);
            float[] a = Array.ConvertAll(h.A, x => (float)x), b = Array.ConvertAll(h.B, x => (float)x);
            float[] c = Array.ConvertAll(h.C0, x => (float)x);
            e.Sgemm(h.L, h.Ta, h.Tb, h.M, h.N, h.K, (float)h.Alpha, a, h.Offset, h.Lda, b, h.Offset, h.Ldb,
                    (float)h.Beta, c, h.Offset, h.Ldc);
            Assert(e.LastReport.Precision == Precision.Single, "Sgemm: " + e.LastReport);
            Throws<Exception>(() => h.Verify(Array.ConvertAll(c, x => (double)x)), "Sgemm's result");
            h.Run(e); h.Verify();
            AssertRanInDouble(e);
        }
    }

    static void DgemmLibraryErrorsAreExceptions()
    {
        Layout R = Layout.RowMajor, C = Layout.ColMajor;
        Transpose N = Transpose.NoTrans;
        using (var e = new Engine(Backend.Cpu, 0))
        {
            var x = new double[64];
            var ex = Throws<TiledMMException>(() => e.Dgemm(R, N, N, -1, 2, 2, 1, x, 2, x, 2, 0, x, 2), "m < 0");
            Assert(ex.Status == Status.InvalidValue && ex.Message.Contains("m must be"), ex.Message);
            ex = Throws<TiledMMException>(() => e.Dgemm(R, N, N, 2, 2, 2, 1, x, 1, x, 2, 0, x, 2), "lda");
            Assert(ex.Message.Contains("lda"), ex.Message);
            ex = Throws<TiledMMException>(() => e.Dgemm(C, N, N, 4, 4, 4, 1, x, 3, x, 4, 1, x, 4), "lda, col-major");
            Assert(ex.Message.Contains("lda must be >= 4"), ex.Message);
            ex = Throws<TiledMMException>(() => e.Dgemm(R, N, N, 4, 4, 4, 1, x, 4, x, 4, 1, x, 3), "ldc");
            Assert(ex.Message.Contains("ldc must be >= 4"), ex.Message);
            ex = Throws<TiledMMException>(() => e.Dgemm(R, N, N, 4, -4, 4, 1, x, 4, x, 4, 1, x, 4), "n < 0");
            Assert(ex.Status == Status.InvalidValue && ex.Message.Contains("n must be >= 0"), ex.Message);
            ex = Throws<TiledMMException>(() => { var t = e.LastTime; }, "no product has succeeded yet");
            Assert(ex.Status == Status.InvalidValue, "InvalidValue");
            // The engine still works after errors.
            var g = new DCase(R, N, N, 5, 6, 7, 1, 0, 0, 0);
            g.Run(e); g.Verify();
            Assert(e.LastTime >= 0, "last time");
            Assert(e.LastTiming.Algorithm == Algorithm.Blocked, "CPU AUTO runs BLOCKED");
        }
    }

    static void DgemmShortArraysAreRejectedBeforeNativeCode()
    {
        using (var e = new Engine(Backend.Cpu, 0))
        {
            double[] a = new double[24], b = new double[20], c = new double[30];
            for (int i = 0; i < c.Length; i++) c[i] = 3;
            Layout R = Layout.RowMajor, C = Layout.ColMajor;
            Transpose N = Transpose.NoTrans, T = Transpose.Trans;
            var x = Throws<ArgumentException>(() => e.Dgemm(R, N, N, 6, 5, 4, 1, new double[23], 4, b, 5, 0, c, 5), "A short");
            Assert(x.ParamName == "A" && x.Message.StartsWith("A needs 24 elements (offset 0, ld 4) but has 23"), x.Message);
            Throws<ArgumentException>(() => e.Dgemm(R, N, N, 6, 5, 4, 1, a, 4, new double[19], 5, 0, c, 5), "B short");
            Throws<ArgumentException>(() => e.Dgemm(R, N, N, 6, 5, 4, 1, a, 4, b, 5, 0, new double[29], 5), "C short");
            Throws<ArgumentException>(() => e.Dgemm(C, T, T, 6, 5, 4, 1, a, 4, b, 5, 0, new double[29], 6), "C short, col-major");
            x = Throws<ArgumentException>(() => e.Dgemm(R, N, N, 6, 5, 4, 1, a, 1, 4, b, 0, 5, 0, c, 0, 5), "offset");
            Assert(x.Message.StartsWith("A needs 25 elements (offset 1, ld 4) but has 24"), x.Message);
            var range = Throws<ArgumentOutOfRangeException>(() => e.Dgemm(R, N, N, 6, 5, 4, 1, a, -1, 4, b, 0, 5, 0, c, 0, 5), "negative offset");
            Assert(range.ParamName == "A" && range.Message.StartsWith("negative offset -1"), range.Message);
            var none = Throws<ArgumentNullException>(() => e.Dgemm(R, N, N, 6, 5, 4, 1, null, 4, b, 5, 0, c, 5), "null A");
            Assert(none.ParamName == "A", none.Message);
            Throws<ArgumentNullException>(() => e.Dgemm(R, N, N, 6, 5, 4, 1, a, 4, b, 5, 0, null, 5), "null C");
            x = Throws<ArgumentException>(() => e.Dgemm(R, N, N, 6, 5, 4, 1, a, long.MaxValue / 2, b, 5, 0, c, 5), "overflow");
            Assert(x.Message.StartsWith("A: size overflows a long"), x.Message);
            // None of them reached the library: no product ran, C untouched.
            Throws<TiledMMException>(() => { var t = e.LastTime; }, "no product ran");
            foreach (double v in c) Assert(v == 3, "C untouched");
            e.Dgemm(R, N, N, 6, 5, 4, 1, a, 4, b, 5, 0, c, 5);
            // Null arrays the call does not need are fine (k = 0 or alpha = 0: C = beta * C).
            e.Dgemm(R, N, N, 6, 5, 0, 1, null, 1, null, 5, 0, c, 5);
            foreach (double v in c) Assert(v == 0, "k = 0, beta = 0: C = 0");
            for (int i = 0; i < c.Length; i++) c[i] = 3;
            e.Dgemm(R, N, N, 6, 5, 4, 0, null, 4, null, 5, -2, c, 5);
            foreach (double v in c) Assert(v == -6, "alpha = 0: C = beta * C");
            AssertRanInDouble(e);
        }
    }

    static void DgemmAfterDispose()
    {
        var e = new Engine(Backend.Cpu, 0);
        e.Dispose();
        e.Dispose();
        var x = new double[4];
        Throws<ObjectDisposedException>(() => e.Dgemm(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, 2, 2, 1, 1, x, 1, x, 2, 0, x, 2), "Dgemm after Dispose");
        Throws<ObjectDisposedException>(() => e.Dgemm(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, 2, 2, 1, 1, x, 0, 1, x, 0, 2, 0, x, 0, 2), "Dgemm with offsets after Dispose");
    }

    static void DgemmScaleOnlyEmptyAndNaN()
    {
        using (var e = new Engine(Backend.Cpu, 0))
        {
            var alphaZero = new DCase(Layout.RowMajor, Transpose.NoTrans, Transpose.Trans, 6, 5, 4, 0, 1.5, 2, 1);
            alphaZero.Run(e); alphaZero.Verify();
            AssertRanInDouble(e);
            Assert(e.LastReport.Kernel.EndsWith("scale"), e.LastReport.ToString());
            var kZero = new DCase(Layout.ColMajor, Transpose.Trans, Transpose.NoTrans, 6, 5, 0, 1, -2, 1, 3);
            kZero.Run(e); kZero.Verify();
            foreach (int[] s in new[] { new[] { 0, 5, 4 }, new[] { 6, 0, 4 } })
            {
                var empty = new DCase(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, s[0], s[1], s[2], 1, 1, 1, 2);
                empty.Run(e); empty.Verify();
                Assert(e.LastReport.Kernel == "none", e.LastReport.ToString());
                AssertRanInDouble(e);
            }
            // Beta = 0 never reads C: NaN there does not reach the result.
            var g = new DCase(Layout.ColMajor, Transpose.NoTrans, Transpose.NoTrans, 9, 7, 5, 1, 0, 2, 1);
            for (int i = 0; i < g.C.Length; i++) g.C[i] = g.C0[i] = double.NaN;
            g.Run(e); g.Verify();
            // Rows longer than any piece the library works in.
            var wide = new DCase(Fill.Integers, Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, 3, 65536 + 17, 2, 1, 0.5, 5, 3);
            wide.Run(e); wide.Verify();
        }
    }

    // The report says which precision ran, call by call, on one engine.
    static void DgemmReportSaysDouble()
    {
        Layout R = Layout.RowMajor;
        Transpose N = Transpose.NoTrans;
        using (var e = new Engine(Backend.Cpu, 0))
        {
            e.SetOption(Option.HostThreads, 2);
            var g = new DCase(R, N, N, 256, 128, 128, 1, 0, 0, 0);  // large enough for 2 threads
            g.Run(e); g.Verify();
            Report r = e.LastReport;
            Assert(r.Precision == Precision.Double, r.ToString());
            Assert(r.Kernel == "cpu_f64_blocked" && r.Algorithm == Algorithm.Blocked, r.ToString());
            Assert(r.MathMode == MathMode.Fp32, "strict, in its precision: " + r);
            Assert(r.HostThreads == 2, "host threads: " + r);
            Assert(r.Backend == Backend.Cpu && r.ToString().StartsWith("cpu_f64_blocked on Cpu"), r.ToString());
            new Case(R, N, N, 30, 20, 10, 1f, 0f, 0, 0).Run(e);
            Assert(e.LastReport.Precision == Precision.Single && e.LastReport.Kernel == "cpu_blocked", e.LastReport.ToString());
            // A failed Dgemm leaves the report of the last successful product.
            Throws<TiledMMException>(() => e.Dgemm(R, N, N, 2, 2, 2, 1, new double[4], 1, new double[4], 2, 0, new double[4], 2), "lda");
            Assert(e.LastReport.Precision == Precision.Single, e.LastReport.ToString());
            var one = new double[1];
            e.Dgemm(R, N, N, 1, 1, 1, 1, new double[] { 2 }, 1, new double[] { 3 }, 1, 0, one, 1);
            Assert(one[0] == 6, "2 * 3");
            Assert(e.LastReport.Precision == Precision.Double, e.LastReport.ToString());
            // The math mode does not change a Dgemm.
            e.SetOption(Option.MathMode, (long)MathMode.Tf32);
            var t = new DCase(Fill.Integers, R, N, N, 9, 9, 9, 1, 0, 0, 0);
            t.Run(e); t.Verify();
            AssertRanInDouble(e);
        }
        // Each double-precision CPU kernel runs under Dgemm when its settings are chosen.
        int seen = 0;
        using (var e = new Engine(Backend.Cpu, 0))
            foreach (KernelInfo k in Engine.Kernels)
            {
                if (k.Backend != Backend.Cpu || k.Precision != Precision.Double) continue;
                e.Algorithm = k.Algorithm;
                e.TileSize = k.TileSize;
                var g = new DCase(Fill.Integers, Layout.ColMajor, N, Transpose.Trans, 17, 19, 23, 1, 0, 0, 0);
                g.Run(e); g.Verify();
                Assert(e.LastReport.Kernel == k.Name, k.Name + ": " + e.LastReport);
                AssertRanInDouble(e);
                seen++;
            }
        Assert(seen >= 2, seen + " double CPU kernels");
    }

    static void DgemmInThreadsAndASharedEngine()
    {
        // Each thread multiplies in double on its own engine and in both precisions on a
        // shared one.
        int failures = 0;
        var shared = new Engine(Backend.Cpu, 0);
        var threads = new List<Thread>();
        for (int t = 0; t < 6; t++)
        {
            int id = t;
            threads.Add(new Thread(() =>
            {
                try
                {
                    using (var own = new Engine(Backend.Cpu, 0))
                        for (int i = 0; i < 5; i++)
                        {
                            var g = new DCase(Fill.Integers, Layout.RowMajor, Transpose.NoTrans, Transpose.Trans, 20 + id, 17 + i, 33, 1, 0, 1, 2);
                            g.Run(own); g.Verify();
                            var h = new DCase(Layout.ColMajor, Transpose.Trans, Transpose.NoTrans, 9 + i, 25 + id, 14, 2, -1, 0, 0);
                            h.Run(shared); h.Verify();
                            var f = new Case(Layout.RowMajor, Transpose.Trans, Transpose.Trans, 7 + i, 5 + id, 12, 1f, 0.5f, 1, 1);
                            f.Run(shared); f.Verify();
                        }
                }
                catch (Exception ex) { Interlocked.Increment(ref failures); Console.Error.WriteLine(ex); }
            }));
        }
        threads.ForEach(th => th.Start());
        threads.ForEach(th => th.Join());
        shared.Dispose();
        Assert(failures == 0, failures + " thread(s) failed");
    }
}
