// Tests of the C# binding on the CPU backend: results against a double-precision
// reference, every error path, lifetime (dispose twice, use after dispose, engines
// left to the garbage collector, counted through NativeHandle), threads and the
// deprecated 1.0 names; OptionsAndReportTests.cs has those of the 1.1 API, and
// DgemmTests.cs those of Dgemm. Prints one line per test and "N passed, M failed"
// last; exits non-zero on any failure.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;
using TiledMM;

static partial class EngineTests
{
    // One generator per thread: System.Random is not thread-safe, and the threaded tests
    // fill their cases at once (a shared one, used concurrently, can fall into returning
    // 0 for good: "random" inputs of -1 that float holds exactly, which once let
    // DgemmFloatResultsFailTheCheck's float-rounded result pass).
    [ThreadStatic] static Random rng;
    static int seeds = Environment.TickCount;
    static Random Rng => rng ?? (rng = new Random(Interlocked.Increment(ref seeds)));
    static int passed, failed;

    static void Assert(bool condition, string what)
    {
        if (!condition) throw new Exception("assertion failed: " + what);
    }

    static T Throws<T>(Action action, string what) where T : Exception
    {
        try { action(); }
        catch (T e) { return e; }
        catch (Exception e) { throw new Exception(what + ": expected " + typeof(T).Name + ", got " + e.GetType().Name + ": " + e.Message); }
        throw new Exception(what + ": expected " + typeof(T).Name + ", nothing was thrown");
    }

    sealed class Case
    {
        public Layout L; public Transpose Ta, Tb; public int M, N, K, Offset;
        public float Alpha, Beta; public long Lda, Ldb, Ldc; public float[] A, B, C, C0;

        public Case(Layout l, Transpose ta, Transpose tb, int m, int n, int k, float alpha, float beta, int pad, int offset)
        {
            L = l; Ta = ta; Tb = tb; M = m; N = n; K = k; Alpha = alpha; Beta = beta; Offset = offset;
            bool row = l == Layout.RowMajor;
            int ar = ta == Transpose.Trans ? k : m, ac = ta == Transpose.Trans ? m : k;
            int br = tb == Transpose.Trans ? n : k, bc = tb == Transpose.Trans ? k : n;
            Lda = Math.Max(1, row ? ac : ar) + pad;
            Ldb = Math.Max(1, row ? bc : br) + pad;
            Ldc = Math.Max(1, row ? n : m) + pad;
            A = Fill(offset + (int)(Math.Max(1, row ? ar : ac) * Lda));
            B = Fill(offset + (int)(Math.Max(1, row ? br : bc) * Ldb));
            C = Fill(offset + (int)(Math.Max(1, row ? m : n) * Ldc));
            C0 = (float[])C.Clone();
        }

        static float[] Fill(int size)
        {
            var x = new float[size];
            for (int i = 0; i < size; i++) x[i] = (float)(Rng.NextDouble() * 2 - 1);
            return x;
        }

        int At(int r, int c, long ld) => Offset + (int)(L == Layout.RowMajor ? r * ld + c : c * ld + r);
        double OpA(int i, int q) => Ta == Transpose.Trans ? A[At(q, i, Lda)] : A[At(i, q, Lda)];
        double OpB(int q, int j) => Tb == Transpose.Trans ? B[At(j, q, Ldb)] : B[At(q, j, Ldb)];

        public void Run(Engine e) =>
            e.Sgemm(L, Ta, Tb, M, N, K, Alpha, A, Offset, Lda, B, Offset, Ldb, Beta, C, Offset, Ldc);

        public void Verify()
        {
            double eps = 1.0 / (1 << 23);
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++)
                {
                    double dot = 0, mag = 0;
                    for (int q = 0; q < K; q++) { dot += OpA(i, q) * OpB(q, j); mag += Math.Abs(OpA(i, q) * OpB(q, j)); }
                    double old = C0[At(i, j, Ldc)];
                    double reference = Alpha * dot + (Beta == 0 ? 0 : Beta * old);
                    double bound = 2 * (K + 2) * eps * (Math.Abs(Alpha) * mag + Math.Abs(Beta * old)) + 1e-30;
                    double got = C[At(i, j, Ldc)];
                    if (!(Math.Abs(got - reference) <= bound))
                        throw new Exception($"C({i},{j}) = {got}, expected {reference}");
                }
        }
    }

    static void MatchesDoubleReference()
    {
        int[][] shapes = { new[] { 1, 1, 1 }, new[] { 7, 13, 11 }, new[] { 33, 17, 65 }, new[] { 100, 37, 129 } };
        using (var e = new Engine(Backend.Cpu, 0))
            foreach (Algorithm algo in new[] { Algorithm.Auto, Algorithm.Naive })
            {
                e.Algorithm = algo;
                foreach (Layout l in new[] { Layout.RowMajor, Layout.ColMajor })
                    foreach (Transpose ta in new[] { Transpose.NoTrans, Transpose.Trans })
                        foreach (Transpose tb in new[] { Transpose.NoTrans, Transpose.Trans })
                            foreach (int[] s in shapes)
                            {
                                var plain = new Case(l, ta, tb, s[0], s[1], s[2], 1f, 0f, 0, 0);
                                plain.Run(e); plain.Verify();
                                var padded = new Case(l, ta, tb, s[0], s[1], s[2], -0.5f, 1.25f, 3, 5);
                                padded.Run(e); padded.Verify();
                            }
            }
    }

    static void VersionsAndSettings()
    {
        Assert(Engine.Version == Engine.BindingVersion, "header and library versions match");
        using (var e = new Engine(Backend.Cpu, 0))
        {
            Assert(e.Backend == Backend.Cpu, "backend");
            Assert(e.Algorithm == Algorithm.Auto, "default algorithm");
            e.Algorithm = Algorithm.Naive;
            Assert(e.Algorithm == Algorithm.Naive, "algorithm round trip");
            e.TileSize = 16;
            Assert(e.TileSize == 16, "tile round trip");
            e.Coarsening = 4;
            Assert(e.Coarsening == 4, "coarsening round trip");
        }
        using (var e = new Engine())
            Assert(e.Backend != Backend.Auto, "AUTO resolves to a backend");
    }

    static void SeveralDevicesAreCheckedAndCpuEnginesHaveNone()
    {
        // A list too long, or an index that does not exist: exceptions, whatever the machine.
        var x = Throws<TiledMMException>(() => new Engine(new int[65]), "65 devices");
        Assert(x.Status == Status.InvalidValue && x.Message.Contains("count"), x.Message);
        x = Throws<TiledMMException>(() => new Engine(new[] { 0, 4096 }), "device 4096");
        Assert(x.Status == Status.NoDevice, x.Message);
        using (var e = new Engine(Backend.Cpu, 0))
        {
            x = Throws<TiledMMException>(() => { var n = e.DeviceCount; }, "device count on CPU");
            Assert(x.Status == Status.NotSupported, "NotSupported");
            x = Throws<TiledMMException>(() => e.GetDeviceInfo(0), "device info 0 on CPU");
            Assert(x.Status == Status.NotSupported, "NotSupported");
            float[] a = { 2f }, b = { 3f }, c = { 0f };
            e.Sgemm(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, 1, 1, 1, 1f, a, 1, b, 1, 0f, c, 1);
            x = Throws<TiledMMException>(() => e.GetDeviceReport(0), "device report on CPU");
            Assert(x.Status == Status.NotSupported, "NotSupported");
            Assert(e.LastReport.DeviceCount == 0, "the CPU computes on no device");
            Assert(e.LastReport.HostBytes == 0, "no staging on the CPU");
        }
        // Where CUDA works: device 0 twice is an engine of two devices, exact on integers.
        Engine two;
        try { two = new Engine(new[] { 0, 0 }); }
        catch (TiledMMException noGpu)
        {
            Assert(noGpu.Status == Status.NoDevice, noGpu.Message);
            return;
        }
        using (two)
        {
            Assert(two.DeviceCount == 2, "two entries");
            Assert(two.GetDeviceInfo(1).Device == 0, "device 0 twice");
            const int n = 300;
            float[] a = new float[n * n], b = new float[n * n], c = new float[n * n];
            for (int i = 0; i < n * n; ++i) { a[i] = i % 5 - 2; b[i] = i % 3 - 1; }
            two.Sgemm(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, n, n, n, 1f, a, n, b, n, 0f, c, n);
            for (int i = 0; i < n; i += 37)
                for (int j = 0; j < n; j += 41)
                {
                    float want = 0;
                    for (int q = 0; q < n; ++q) want += a[i * n + q] * b[q * n + j];
                    Assert(c[i * n + j] == want, "exact");
                }
        }
    }

    static void LibraryErrorsAreExceptions()
    {
        using (var e = new Engine(Backend.Cpu, 0))
        {
            var x = Throws<TiledMMException>(() => e.TileSize = 7, "tile 7");
            Assert(x.Status == Status.InvalidValue && x.Message.Contains("tile size"), x.Message);
            x = Throws<TiledMMException>(() => e.Algorithm = Algorithm.Tiled, "tiled on CPU");
            Assert(x.Status == Status.NotSupported, "NotSupported");
            x = Throws<TiledMMException>(() => { var d = e.DeviceInfo; }, "device info on CPU");
            Assert(x.Status == Status.NotSupported, "NotSupported");
            x = Throws<TiledMMException>(() => { var t = e.LastTime; }, "no sgemm yet");
            Assert(x.Status == Status.InvalidValue, "InvalidValue");
            var f = new float[16];
            x = Throws<TiledMMException>(() => e.Sgemm(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, -1, 2, 2, 1f, f, 2, f, 2, 0f, f, 2), "m < 0");
            Assert(x.Message.Contains("m must be"), x.Message);
            x = Throws<TiledMMException>(() => e.Sgemm(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, 2, 2, 2, 1f, f, 1, f, 2, 0f, f, 2), "lda");
            Assert(x.Message.Contains("lda"), x.Message);
            var g = new Case(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, 5, 6, 7, 1f, 0f, 0, 0);
            g.Run(e); g.Verify();
            Assert(e.LastTime >= 0, "last time");
            Assert(e.LastTiming.Algorithm == Algorithm.Blocked, "CPU AUTO runs BLOCKED");
        }
        var y = Throws<TiledMMException>(() => new Engine(Backend.Cuda, 4096), "no such device");
        Assert(y.Status == Status.NoDevice, "NoDevice");
    }

    static void ShortArraysAreRejectedBeforeNativeCode()
    {
        using (var e = new Engine(Backend.Cpu, 0))
        {
            float[] a = new float[24], b = new float[20], c = new float[30];
            Layout R = Layout.RowMajor, C = Layout.ColMajor;
            Transpose N = Transpose.NoTrans, T = Transpose.Trans;
            e.Sgemm(R, N, N, 6, 5, 4, 1f, a, 4, b, 5, 0f, c, 5);
            Throws<ArgumentException>(() => e.Sgemm(R, N, N, 6, 5, 4, 1f, new float[23], 4, b, 5, 0f, c, 5), "A short");
            Throws<ArgumentException>(() => e.Sgemm(R, N, N, 6, 5, 4, 1f, a, 4, new float[19], 5, 0f, c, 5), "B short");
            Throws<ArgumentException>(() => e.Sgemm(R, N, N, 6, 5, 4, 1f, a, 4, b, 5, 0f, new float[29], 5), "C short");
            Throws<ArgumentException>(() => e.Sgemm(C, T, T, 6, 5, 4, 1f, a, 4, b, 5, 0f, new float[29], 6), "C short, col-major");
            Throws<ArgumentException>(() => e.Sgemm(R, N, N, 6, 5, 4, 1f, a, 1, 4, b, 0, 5, 0f, c, 0, 5), "offset");
            Throws<ArgumentOutOfRangeException>(() => e.Sgemm(R, N, N, 6, 5, 4, 1f, a, -1, 4, b, 0, 5, 0f, c, 0, 5), "negative offset");
            Throws<ArgumentNullException>(() => e.Sgemm(R, N, N, 6, 5, 4, 1f, null, 4, b, 5, 0f, c, 5), "null A");
            Throws<ArgumentException>(() => e.Sgemm(R, N, N, 6, 5, 4, 1f, a, long.MaxValue / 2, b, 5, 0f, c, 5), "overflow");
            e.Sgemm(R, N, N, 6, 5, 0, 1f, null, 1, null, 5, 0f, c, 5);  // k = 0: A and B unused
        }
    }

    static void DisposeTwiceAndUseAfterDispose()
    {
        var e = new Engine(Backend.Cpu, 0);
        e.Dispose();
        e.Dispose();
        Throws<ObjectDisposedException>(() => { var t = e.LastTime; }, "LastTime after Dispose");
        Throws<ObjectDisposedException>(() => e.Algorithm = Algorithm.Naive, "setter after Dispose");
        var f = new float[4];
        Throws<ObjectDisposedException>(() => e.Sgemm(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, 2, 2, 1, 1f, f, 1, f, 2, 0f, f, 2), "Sgemm after Dispose");
    }

    static void EnginesLeftToTheGarbageCollectorAreReleased()
    {
        const int count = 200;
        long destroyedBefore = NativeHandle.Destroyed;
        long liveBefore = NativeHandle.Created - destroyedBefore;
        // On a thread of its own, so that no stale reference to an engine survives on
        // this thread's stack (Mono scans stacks conservatively).
        var dropper = new Thread(() => DropEngines(count));
        dropper.Start();
        dropper.Join();
        Assert(NativeHandle.Created - destroyedBefore == liveBefore + count, "created " + count);
        // Collect until the SafeHandles' finalizers have destroyed all of them, with a
        // deadline.
        var clock = Stopwatch.StartNew();
        while (NativeHandle.Destroyed - destroyedBefore < count && clock.Elapsed.TotalSeconds < 60)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            if (NativeHandle.Destroyed - destroyedBefore < count) Thread.Sleep(20);
        }
        long destroyed = NativeHandle.Destroyed - destroyedBefore;
        Assert(destroyed >= count, "the garbage collector released " + destroyed + " of " + count + " native handles");
        long live = NativeHandle.Created - NativeHandle.Destroyed;
        Assert(live <= liveBefore, live + " native handles live, " + liveBefore + " before");
        using (var e = new Engine(Backend.Cpu, 0)) Assert(e.Backend == Backend.Cpu, "still works");
    }

    // Creates engines, uses them, and keeps no reference to any.
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void DropEngines(int count)
    {
        var x = new float[16];
        for (int i = 0; i < count; i++)
        {
            var e = new Engine(Backend.Cpu, 0);
            e.TileSize = 16;
            e.Sgemm(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, 4, 4, 4, 1f, x, 4, x, 4, 0f, new float[16], 4);
        }
    }

    static void DisposeDestroysTheNativeHandleOnce()
    {
        long destroyed = NativeHandle.Destroyed;
        var e = new Engine(Backend.Cpu, 0);
        e.Dispose();
        e.Dispose();
        Assert(NativeHandle.Destroyed == destroyed + 1, "one native handle destroyed");
        Throws<TiledMMException>(() => new Engine(Backend.Cuda, 4096), "no such device");
        GC.Collect();
        GC.WaitForPendingFinalizers();
        Assert(NativeHandle.Destroyed == destroyed + 1, "a failed constructor destroys nothing");
    }

    // Every 1.0 name still works, as a deprecated alias of its new name.
#pragma warning disable 618
    static void DeprecatedNamesStillWork()
    {
        using (var e = new Engine(Backend.Cpu, 0))
        {
            TiledmmException x = Throws<TiledmmException>(() => e.TileSize = 7, "1.0 catch clause");
            Assert(x is TiledMMException, "the new type is thrown");
            Assert(x.Status == Status.InvalidValue, "Status through the 1.0 type");
            try
            {
                e.Algorithm = Algorithm.Tiled;
                throw new Exception("expected an exception");
            }
            catch (TiledmmException old)
            {
                Assert(old.Status == Status.NotSupported, "catch (TiledmmException)");
            }
        }
    }
#pragma warning restore 618

    static void EnginesInThreadsAndASharedEngine()
    {
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
                            var g = new Case(Layout.RowMajor, Transpose.NoTrans, Transpose.Trans, 20 + id, 17 + i, 33, 1f, 0f, 1, 2);
                            g.Run(own); g.Verify();
                            var h = new Case(Layout.ColMajor, Transpose.Trans, Transpose.NoTrans, 9 + i, 25 + id, 14, 2f, -1f, 0, 0);
                            h.Run(shared); h.Verify();
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

    static int Main()
    {
        Action[] tests =
        {
            MatchesDoubleReference, VersionsAndSettings, LibraryErrorsAreExceptions,
            SeveralDevicesAreCheckedAndCpuEnginesHaveNone,
            ShortArraysAreRejectedBeforeNativeCode, DisposeTwiceAndUseAfterDispose,
            DisposeDestroysTheNativeHandleOnce, EnginesLeftToTheGarbageCollectorAreReleased,
            EnginesInThreadsAndASharedEngine, DeprecatedNamesStillWork,
            // OptionsAndReportTests.cs
            OptionsStartAtTheirDefaultsAndRoundTrip, BadOptionValuesRaiseTheLibrarysMessage,
            OptionBoundsAndNames, ReserveHostStagingOnTheCpu, ReportAfterAProduct,
            MathModeIsWhatRanNotWhatWasAllowed, KernelList,
            ValuesTheBindingDoesNotNameKeepTheirNumbers, GeneratedEnumsMatchTheHeader,
            // DgemmTests.cs
            DgemmMatchesTheReference, DgemmFloatResultsFailTheCheck, DgemmLibraryErrorsAreExceptions,
            DgemmShortArraysAreRejectedBeforeNativeCode, DgemmAfterDispose,
            DgemmScaleOnlyEmptyAndNaN, DgemmReportSaysDouble, DgemmInThreadsAndASharedEngine,
            // BatchedTests.cs
            StridedBatchedEqualsTheSingleCalls, StridedBatchedArgumentErrors,
        };
        foreach (Action test in tests)
        {
            string name = test.Method.Name;
            try { test(); passed++; Console.WriteLine("PASS " + name); }
            catch (Exception e) { failed++; Console.WriteLine("FAIL " + name + ": " + e.Message); }
        }
        Console.WriteLine($"{passed} passed, {failed} failed");
        return failed == 0 ? 0 : 1;
    }
}
