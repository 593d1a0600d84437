// Tests of the 1.1 API of the C# binding on the CPU backend: options (round trip, the
// library's errors, bounds and names), reserving the host staging, the report of the
// last product (with the math mode that ran), the kernel list, values the binding does
// not name, and the generated enums against SWIG's reading of tiledmm.h. Run by Main in
// EngineTests.cs.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Reflection;
using TiledMM;

static partial class EngineTests
{
    static void OptionsStartAtTheirDefaultsAndRoundTrip()
    {
        using (var e = new Engine(Backend.Cpu, 0))
        {
            foreach (Option option in Enum.GetValues(typeof(Option)))
                Assert(e.GetOption(option) == Engine.GetOptionBounds(option).DefaultValue, option + " starts at its default");
            e.SetOption(Option.HostThreads, 4);
            Assert(e.GetOption(Option.HostThreads) == 4, "host threads round trip");
            e.SetOption(Option.HostThreads, 0);
            Assert(e.GetOption(Option.HostThreads) == 0, "host threads back to 0");
            // The typed properties of 1.0 are the same settings as their options.
            e.SetOption(Option.Algorithm, (long)Algorithm.Naive);
            Assert(e.Algorithm == Algorithm.Naive, "Option.Algorithm is the Algorithm property");
            e.Algorithm = Algorithm.Blocked;
            Assert(e.GetOption(Option.Algorithm) == (long)Algorithm.Blocked, "and back");
            e.SetOption(Option.TileSize, 16);
            Assert(e.TileSize == 16, "Option.TileSize is the TileSize property");
            e.Coarsening = 4;
            Assert(e.GetOption(Option.Coarsening) == 4, "Option.Coarsening is the Coarsening property");
        }
    }

    static void BadOptionValuesRaiseTheLibrarysMessage()
    {
        OptionBounds bounds = Engine.GetOptionBounds(Option.HostThreads);
        using (var e = new Engine(Backend.Cpu, 0))
        {
            e.SetOption(Option.HostThreads, 3);
            foreach (long bad in new[] { bounds.Lower - 1, bounds.Upper + 1, long.MinValue })
            {
                var x = Throws<TiledMMException>(() => e.SetOption(Option.HostThreads, bad), "host_threads " + bad);
                Assert(x.Status == Status.InvalidValue, "InvalidValue");
                string expected = $"host_threads must be in [{bounds.Lower}, {bounds.Upper}] (got {bad})";
                Assert(x.Message.Contains(expected), x.Message);
                Assert(e.GetOption(Option.HostThreads) == 3, "the setting is unchanged");
            }
            var y = Throws<TiledMMException>(() => e.SetOption(Option.TileSize, 7), "tile 7");
            Assert(y.Status == Status.InvalidValue && y.Message.Contains("tile size"), y.Message);
            y = Throws<TiledMMException>(() => e.SetOption(Option.Algorithm, (long)Algorithm.Tiled), "tiled on the CPU");
            Assert(y.Status == Status.NotSupported, "NotSupported");
            // A number the binding does not name reaches the library, which says what it is.
            y = Throws<TiledMMException>(() => e.SetOption((Option)999, 1), "option 999");
            Assert(y.Status == Status.InvalidValue && y.Message.Contains("unknown option 999"), y.Message);
            Throws<TiledMMException>(() => Engine.GetOptionBounds((Option)999), "bounds of option 999");
            Throws<TiledMMException>(() => Engine.GetOptionName((Option)999), "name of option 999");
        }
        var disposed = new Engine(Backend.Cpu, 0);
        disposed.Dispose();
        Throws<ObjectDisposedException>(() => disposed.SetOption(Option.HostThreads, 1), "SetOption after Dispose");
        Throws<ObjectDisposedException>(() => disposed.GetOption(Option.HostThreads), "GetOption after Dispose");
        Throws<ObjectDisposedException>(() => { var r = disposed.LastReport; }, "LastReport after Dispose");
    }

    static void ReserveHostStagingOnTheCpu()
    {
        using (var e = new Engine(Backend.Cpu, 0))
        {
            // The CPU backend has no staging: sizes within the budget are a no-op.
            e.ReserveHostStaging(0);
            e.ReserveHostStaging(1 << 20);
            foreach (long bad in new[] { -1L, long.MinValue })
            {
                var a = Throws<ArgumentOutOfRangeException>(() => e.ReserveHostStaging(bad), "bytes " + bad);
                Assert(a.ParamName == "bytes" && (long)a.ActualValue == bad, a.Message);
            }
            // More than the budget (HostStagingBytes) is the library's InvalidValue.
            e.SetOption(Option.HostStagingBytes, 1 << 20);
            e.ReserveHostStaging(1 << 20);
            e.ReserveHostStaging(0);
            var x = Throws<TiledMMException>(() => e.ReserveHostStaging((1 << 20) + 1), "1 MiB + 1 over a 1 MiB budget");
            Assert(x.Status == Status.InvalidValue, "InvalidValue: " + x.Message);
            Assert(e.GetOption(Option.HostStagingBytes) == 1 << 20, "the budget is unchanged");
            e.ReserveHostStaging(1 << 20);  // the engine works on
        }
        var disposed = new Engine(Backend.Cpu, 0);
        disposed.Dispose();
        Throws<ObjectDisposedException>(() => disposed.ReserveHostStaging(0), "ReserveHostStaging after Dispose");
    }

    static void OptionBoundsAndNames()
    {
        foreach (Option option in Enum.GetValues(typeof(Option)))
        {
            OptionBounds b = Engine.GetOptionBounds(option);
            Assert(b.Option == option, "bounds of " + option);
            Assert(b.Lower <= b.DefaultValue && b.DefaultValue <= b.Upper, b.ToString());
            Assert(b.Contains(b.DefaultValue) && !b.Contains(b.Upper + 1), b.ToString());
            // The library names each option after its enumerator: TMM_OPTION_HOST_THREADS.
            string name = Engine.GetOptionName(option);
            Assert(PascalCase(name) == option.ToString(), name + " names " + option);
        }
        OptionBounds threads = Engine.GetOptionBounds(Option.HostThreads);
        Assert(threads.Lower == 0 && threads.DefaultValue == 0 && threads.Upper >= 64, threads.ToString());
        OptionBounds algorithms = Engine.GetOptionBounds(Option.Algorithm);
        foreach (Algorithm a in Enum.GetValues(typeof(Algorithm)))
            Assert(algorithms.Contains((long)a), a + " in " + algorithms);
        OptionBounds tiles = Engine.GetOptionBounds(Option.TileSize);
        foreach (KernelInfo k in Engine.Kernels)
            Assert(tiles.Contains(k.TileSize), k + " in " + tiles);
    }

    // A product large enough (4 row blocks, 8 MFLOP) for the CPU to use several threads.
    static Case Product() =>
        new Case(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, 256, 128, 128, 1f, 0f, 0, 0);

    static void ReportAfterAProduct()
    {
        using (var e = new Engine(Backend.Cpu, 0))
        {
            var none = Throws<TiledMMException>(() => { var r0 = e.LastReport; }, "no sgemm yet");
            Assert(none.Status == Status.InvalidValue, "InvalidValue");

            e.SetOption(Option.HostThreads, 2);
            Case g = Product();
            g.Run(e);
            g.Verify();
            Report r = e.LastReport;
            Assert(r.Kernel == "cpu_blocked", "kernel " + r.Kernel);
            Assert(r.Backend == Backend.Cpu && r.Device == -1, r.ToString());
            Assert(r.Algorithm == Algorithm.Blocked, r.ToString());
            Assert(r.HostThreads == 2, "host_threads honoured: " + r);
            Assert(r.Splits == 1 && r.UploadMs == 0 && r.DownloadMs == 0, r.ToString());
            Assert(r.HostPath == HostPath.Auto && r.Tiles == 1 && r.KChunks == 1 && r.LinkMs == 0,
                   "the CPU takes no host path: " + r);
            Assert(r.ComputeMs >= 0 && r.TotalMs >= r.ComputeMs, r.ToString());
            Timing t = e.LastTiming;
            Assert(t.Algorithm == r.Algorithm && t.TileSize == r.TileSize && t.Coarsening == r.Coarsening,
                   "report and timing agree");
            Assert(r.ToString().StartsWith("cpu_blocked on Cpu"), r.ToString());
            Assert(r.MathMode == MathMode.Fp32, "the CPU runs strict FP32: " + r);
            Assert(r.ToString().Contains("(Blocked, Fp32"), r.ToString());

            e.SetOption(Option.HostThreads, 1);
            Product().Run(e);
            Assert(e.LastReport.HostThreads == 1, "one host thread");

            e.Algorithm = Algorithm.Naive;
            Product().Run(e);
            r = e.LastReport;
            Assert(r.Kernel == "cpu_naive" && r.Algorithm == Algorithm.Naive, r.ToString());
            Assert(r.MathMode == MathMode.Fp32, r.ToString());

            // Products that run no multiplication kernel say so, and ran strict FP32.
            new Case(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, 8, 8, 8, 0f, 2f, 0, 0).Run(e);
            Assert(e.LastReport.Kernel.EndsWith("scale"), "alpha = 0: " + e.LastReport);
            Assert(e.LastReport.MathMode == MathMode.Fp32, "alpha = 0: " + e.LastReport);
            new Case(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, 0, 8, 8, 1f, 0f, 0, 0).Run(e);
            Assert(e.LastReport.Kernel == "none", "m = 0: " + e.LastReport);
            Assert(e.LastReport.MathMode == MathMode.Fp32, "m = 0: " + e.LastReport);
        }
    }

    static void MathModeIsWhatRanNotWhatWasAllowed()
    {
        using (var e = new Engine(Backend.Cpu, 0))
        {
            e.Algorithm = Algorithm.Blocked;  // the own kernels: AUTO may run the system BLAS
            Product().Run(e);
            Assert(e.LastReport.MathMode == MathMode.Fp32, "a default engine: " + e.LastReport);
            Assert(e.LastReport.Precision == Precision.Single, "a float product: " + e.LastReport);
            // A math mode is a permission, not a demand: the CPU backend takes every mode, has
            // no tensor-core kernel, and runs (and reports) strict FP32.
            foreach (MathMode allowed in new[] { MathMode.Tf32, MathMode.Fp32Accurate })
            {
                e.SetOption(Option.MathMode, (long)allowed);
                Assert(e.GetOption(Option.MathMode) == (long)allowed, allowed + ": the setting holds");
                Case g = Product();
                g.Run(e);
                g.Verify();
                Report r = e.LastReport;
                Assert(r.Kernel == "cpu_blocked", "kernel " + r.Kernel);
                Assert(r.MathMode == MathMode.Fp32, allowed + " allowed: " + r);
            }
            e.SetOption(Option.MathMode, (long)MathMode.Fp32);
            Assert(e.GetOption(Option.MathMode) == (long)MathMode.Fp32, "back to Fp32");
        }
    }

    static void KernelList()
    {
        IReadOnlyList<KernelInfo> kernels = Engine.Kernels;
        Assert(ReferenceEquals(kernels, Engine.Kernels), "read once");
        Throws<NotSupportedException>(() => ((IList<KernelInfo>)kernels).Add(kernels[0]), "read-only");
        var names = new HashSet<string>();
        var defaults = new HashSet<string>();
        foreach (KernelInfo k in kernels)
        {
            Assert(names.Add(k.Name), "unique name " + k.Name);
            Assert(!string.IsNullOrEmpty(k.Description), k.ToString());
            Assert(k.Backend == Backend.Cpu || k.Backend == Backend.Cuda, k.ToString());
            Assert(k.Algorithm != Algorithm.Auto && Enum.IsDefined(typeof(Algorithm), k.Algorithm), k.ToString());
            Assert(k.MinComputeCapability <= k.MaxComputeCapability, k.ToString());
            Assert(Enum.IsDefined(typeof(MathMode), k.MathMode), k.ToString());
            if (k.Backend == Backend.Cpu)
                Assert(k.MathMode == MathMode.Fp32, "the CPU has strict FP32 only: " + k);
            if (k.MathMode != MathMode.Fp32)  // tensor cores: Blocked (and Auto) only
                Assert(k.Algorithm == Algorithm.Blocked, k.ToString());
            Assert(Enum.IsDefined(typeof(Precision), k.Precision), k.ToString());
            if (k.IsDefault)
                Assert(defaults.Add(k.Backend + " " + k.Precision + " " + k.Algorithm), "one default: " + k);
        }
        Assert(names.Contains("cpu_naive") && names.Contains("cpu_blocked"), string.Join(", ", names));
        if (kernels.Any(k => k.Backend == Backend.Cuda))  // a CUDA build
        {
            foreach (string cuda in new[] { "naive_16", "tiled_32", "blocked_128x256" })
                Assert(names.Contains(cuda), cuda + " in " + string.Join(", ", names));
            // Each math mode has a kernel among the CUDA rows.
            var modes = new HashSet<MathMode>(kernels.Where(k => k.Backend == Backend.Cuda)
                                                     .Select(k => k.MathMode));
            foreach (MathMode mode in new[] { MathMode.Fp32, MathMode.Tf32, MathMode.Fp32Accurate })
                Assert(modes.Contains(mode), mode + " in " + string.Join(", ", modes));
        }
        // Each single-precision CPU kernel runs when its settings are chosen (the products
        // of this binding are float ones), and the report names it.
        using (var e = new Engine(Backend.Cpu, 0))
            foreach (KernelInfo k in kernels.Where(k => k.Backend == Backend.Cpu &&
                                                        k.Precision == Precision.Single))
            {
                e.Algorithm = k.Algorithm;
                e.TileSize = k.TileSize;
                Product().Run(e);
                Assert(e.LastReport.Kernel == k.Name, k.Name + " ran as " + e.LastReport.Kernel);
                Assert(e.LastReport.MathMode == k.MathMode, k.Name + " ran as " + e.LastReport);
            }
    }

    static void ValuesTheBindingDoesNotNameKeepTheirNumbers()
    {
        // A newer library may return values this binding was not generated with: C# enums
        // hold them, and nothing on the way throws.
        var algorithm = (Algorithm)42;
        Assert(!Enum.IsDefined(typeof(Algorithm), algorithm) && algorithm.ToString() == "42", "Algorithm 42");
        var mathMode = (MathMode)42;
        Assert(!Enum.IsDefined(typeof(MathMode), mathMode) && mathMode.ToString() == "42", "MathMode 42");
        TiledMMException x = Engine.Error(99, "");
        Assert((int)x.Status == 99 && x.Message.Contains("unknown"), x.Message);
    }

    // "host_threads" -> "HostThreads": the generator's rule for C names.
    static string PascalCase(string snake) =>
        string.Concat(snake.ToLowerInvariant().Split('_')
                           .Select(w => w.Length == 0 ? w : char.ToUpperInvariant(w[0]) + w.Substring(1)));

    // The enums generate_enums.cmake wrote against SWIG's wrapping of the same header: the
    // TMM_ constants of the internal TiledMMNative class, whose values the compiled C
    // wrapper returns. Each constant is a member of its enum with the same value, and each
    // member is one constant.
    static void GeneratedEnumsMatchTheHeader()
    {
        var prefixes = new Dictionary<Type, string[]>
        {
            { typeof(Status), new[] { "TMM_ERROR_", "TMM_" } },
            { typeof(Layout), new[] { "TMM_" } },
            { typeof(Transpose), new[] { "TMM_" } },
            { typeof(Backend), new[] { "TMM_BACKEND_" } },
            { typeof(Algorithm), new[] { "TMM_ALGO_" } },
            { typeof(Option), new[] { "TMM_OPTION_" } },
        };
        Type native = typeof(Engine).Assembly.GetType("TiledMM.TiledMMNative", true);
        var constants = native.GetFields(BindingFlags.Public | BindingFlags.Static)
                              .Where(f => f.Name.StartsWith("TMM_") && f.FieldType == typeof(int))
                              .ToDictionary(f => f.Name, f => (int)f.GetValue(null));
        Assert(constants.Count > 0, "SWIG wraps the header's enumerators");
        var members = new HashSet<string>();
        foreach (var entry in prefixes)
            foreach (string member in Enum.GetNames(entry.Key))
                members.Add(entry.Key.Name + "." + member);
        var matched = new HashSet<string>();
        foreach (var constant in constants)
        {
            string found = null;
            foreach (var entry in prefixes)
            {
                string prefix = entry.Value.FirstOrDefault(p => constant.Key.StartsWith(p));
                if (prefix == null) continue;
                string member = PascalCase(constant.Key.Substring(prefix.Length));
                if (Enum.IsDefined(entry.Key, member) &&
                    (int)Enum.Parse(entry.Key, member) == constant.Value)
                    found = entry.Key.Name + "." + member;
            }
            Assert(found != null, constant.Key + " = " + constant.Value + " is in no generated enum");
            matched.Add(found);
        }
        members.ExceptWith(matched);
        Assert(members.Count == 0, "not in the header: " + string.Join(", ", members));
    }
}
