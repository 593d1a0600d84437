// Engine.SgemmStridedBatched and DgemmStridedBatched on the CPU backend: every product
// equals the single call on it bit for bit (both layouts, all transposes, padding,
// offsets, gaps between products, A shared by every product, beta 0 over NaN), nothing
// outside the products changes, the report's batch; arrays too short for the last
// product are rejected before native code runs; the library's errors (overlapping
// products of C, a negative batch) are exceptions; batch 0 needs no array.
using System;
using TiledMM;

static partial class EngineTests
{
    // The strided batched call and the single call of one precision (T: float or double).
    delegate void BatchedCall<T>(Engine e, Layout l, Transpose ta, Transpose tb, long m, long n, long k,
                                 double alpha, T[] a, int oa, long lda, long sa, T[] b, int ob, long ldb,
                                 long sb, double beta, T[] c, int oc, long ldc, long sc, long batch);
    delegate void SingleCall<T>(Engine e, Layout l, Transpose ta, Transpose tb, long m, long n, long k,
                                double alpha, T[] a, int oa, long lda, T[] b, int ob, long ldb, double beta,
                                T[] c, int oc, long ldc);

    // One random batch of either precision.
    static void BatchMatchesTheSingleCalls<T>(Engine e, int variant, BatchedCall<T> batched,
                                              SingleCall<T> single, Func<double, T> of)
    {
        Layout l = variant % 2 == 0 ? Layout.RowMajor : Layout.ColMajor;
        Transpose ta = (variant / 2) % 2 == 0 ? Transpose.NoTrans : Transpose.Trans;
        Transpose tb = (variant / 4) % 2 == 0 ? Transpose.NoTrans : Transpose.Trans;
        bool row = l == Layout.RowMajor;
        int m = Rng.Next(1, 12), n = Rng.Next(1, 12), k = Rng.Next(1, 20), batch = Rng.Next(2, 5);
        int pad = Rng.Next(0, 3), gap = Rng.Next(0, 4), offset = Rng.Next(0, 3);
        bool sharedA = variant % 3 == 2;
        int ar = ta == Transpose.Trans ? k : m, ac = ta == Transpose.Trans ? m : k;
        int br = tb == Transpose.Trans ? n : k, bc = tb == Transpose.Trans ? k : n;
        long lda = (row ? ac : ar) + pad, ldb = (row ? bc : br) + pad, ldc = (row ? n : m) + pad;
        long spanA = ((row ? ar : ac) - 1) * lda + (row ? ac : ar);
        long spanB = ((row ? br : bc) - 1) * ldb + (row ? bc : br);
        long spanC = ((row ? m : n) - 1) * ldc + (row ? n : m);
        long sa = sharedA ? 0 : spanA + gap, sb = spanB + gap, sc = spanC + gap;
        var a = new T[offset + (batch - 1) * sa + spanA];
        var b = new T[offset + (batch - 1) * sb + spanB];
        var c = new T[offset + (batch - 1) * sc + spanC + 3];
        double beta = variant % 4 == 0 ? 0.0 : -1.5;
        for (int i = 0; i < a.Length; i++) a[i] = of(Rng.NextDouble() * 2 - 1);
        for (int i = 0; i < b.Length; i++) b[i] = of(Rng.NextDouble() * 2 - 1);
        for (int i = 0; i < c.Length; i++) c[i] = of(beta == 0 ? double.NaN : Rng.NextDouble() * 2 - 1);
        var want = (T[])c.Clone();
        for (int p = 0; p < batch; p++)
            single(e, l, ta, tb, m, n, k, 0.75, a, offset + (int)(p * sa), lda, b, offset + (int)(p * sb),
                   ldb, beta, want, offset + (int)(p * sc), ldc);
        batched(e, l, ta, tb, m, n, k, 0.75, a, offset, lda, sa, b, offset, ldb, sb, beta, c, offset, ldc,
                sc, batch);
        for (int i = 0; i < c.Length; i++)
            Assert(want[i].Equals(c[i]), $"variant {variant}: element {i} is {c[i]}, the single calls give {want[i]}");
        Assert(e.LastReport.Batch == batch, "report's batch " + e.LastReport.Batch);
    }

    static void StridedBatchedEqualsTheSingleCalls()
    {
        using (var e = new Engine(Backend.Cpu, 0))
        {
            for (int variant = 0; variant < 48; variant++)
            {
                BatchMatchesTheSingleCalls<float>(e, variant,
                    (en, l, ta, tb, m, n, k, alpha, a, oa, lda, sa, b, ob, ldb, sb, beta, c, oc, ldc, sc, batch) =>
                        en.SgemmStridedBatched(l, ta, tb, m, n, k, (float)alpha, a, oa, lda, sa, b, ob, ldb, sb,
                                               (float)beta, c, oc, ldc, sc, batch),
                    (en, l, ta, tb, m, n, k, alpha, a, oa, lda, b, ob, ldb, beta, c, oc, ldc) =>
                        en.Sgemm(l, ta, tb, m, n, k, (float)alpha, a, oa, lda, b, ob, ldb, (float)beta, c, oc, ldc),
                    x => (float)x);
                BatchMatchesTheSingleCalls<double>(e, variant,
                    (en, l, ta, tb, m, n, k, alpha, a, oa, lda, sa, b, ob, ldb, sb, beta, c, oc, ldc, sc, batch) =>
                        en.DgemmStridedBatched(l, ta, tb, m, n, k, alpha, a, oa, lda, sa, b, ob, ldb, sb,
                                               beta, c, oc, ldc, sc, batch),
                    (en, l, ta, tb, m, n, k, alpha, a, oa, lda, b, ob, ldb, beta, c, oc, ldc) =>
                        en.Dgemm(l, ta, tb, m, n, k, alpha, a, oa, lda, b, ob, ldb, beta, c, oc, ldc),
                    x => x);
            }
        }
    }

    static void StridedBatchedArgumentErrors()
    {
        Layout R = Layout.RowMajor;
        Transpose N = Transpose.NoTrans;
        using (var e = new Engine(Backend.Cpu, 0))
        {
            // Three 4 x 4 products 16 apart need 48 elements in each array.
            var a = new float[48]; var b = new float[48]; var c = new float[48]; var shortC = new float[47];
            e.SgemmStridedBatched(R, N, N, 4, 4, 4, 1, a, 0, 4, 16, b, 0, 4, 16, 0, c, 0, 4, 16, 3);
            Throws<ArgumentException>(() => e.SgemmStridedBatched(R, N, N, 4, 4, 4, 1, a, 0, 4, 16, b, 0, 4, 16,
                                                                   0, shortC, 0, 4, 16, 3), "C one short");
            Throws<ArgumentException>(() => e.SgemmStridedBatched(R, N, N, 4, 4, 4, 1, a, 1, 4, 16, b, 0, 4, 16,
                                                                   0, c, 0, 4, 16, 3), "A's offset past its end");
            var d = new double[48];
            Throws<ArgumentException>(() => e.DgemmStridedBatched(R, N, N, 4, 4, 4, 1, d, 0, 4, 17, d, 0, 4, 0,
                                                                   0, new double[48], 0, 4, 16, 3), "A's stride");
            // The library's own checks: products of C that share elements, a negative batch.
            var ex = Throws<TiledMMException>(() => e.SgemmStridedBatched(R, N, N, 4, 4, 4, 1, a, 0, 4, 16, b, 0, 4,
                                                                          16, 0, c, 0, 4, 15, 3), "overlap");
            Assert(ex.Status == Status.InvalidValue && ex.Message.Contains("share elements"), ex.Message);
            ex = Throws<TiledMMException>(() => e.SgemmStridedBatched(R, N, N, 4, 4, 4, 1, a, 0, 4, 16, b, 0, 4,
                                                                      16, 0, c, 0, 4, 16, -1), "batch < 0");
            Assert(ex.Status == Status.InvalidValue && ex.Message.Contains("batch must be >= 0"), ex.Message);
            // An empty batch touches nothing and needs no array.
            e.DgemmStridedBatched(R, N, N, 4, 4, 4, 1, null, 0, 4, 16, null, 0, 4, 16, 0, null, 0, 4, 16, 0);
            Assert(e.LastReport.Batch == 0, "empty batch reported");
        }
    }
}
