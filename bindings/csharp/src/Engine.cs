// TiledMM.Engine: a tiledmm handle for C#. Every call checks its arguments, then
// calls the SWIG-generated layer (internal), and turns a failing status into a
// TiledMMException carrying the library's message. Names follow the .NET design
// guidelines (see bindings/csharp/tiledmm_csharp.i).
using System;
using System.Collections.Generic;
using System.IO;

namespace TiledMM
{
    /// <summary>
    /// Single- and double-precision matrix multiplication on a CUDA GPU or the CPU.
    /// <code>
    /// using (var mm = new Engine())
    /// {
    ///     mm.Sgemm(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans,
    ///              m, n, k, 1f, a, k, b, n, 0f, c, n);   // c = a * b, float[]
    ///     mm.Dgemm(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans,
    ///              m, n, k, 1.0, x, k, y, n, 0.0, z, n); // z = x * y, double[]
    ///     Console.WriteLine(mm.LastReport);              // kernel, threads, times, precision
    /// }
    /// </code>
    /// Sgemm and Dgemm take the same arguments and make the same checks.
    /// Settings are options (<see cref="SetOption"/>; <see cref="GetOptionBounds"/> says
    /// what each takes); the library's kernels are listed by <see cref="Kernels"/>. Enum
    /// arguments are passed to the library as their numbers, so a value this binding does
    /// not name ((Option)7) reaches the library, which accepts it if it knows it (a newer
    /// library) and otherwise raises TiledMMException(InvalidValue).
    /// Arrays that are too short, negative offsets and sizes, and null arrays that the
    /// call needs raise ArgumentException before any native code runs; a disposed engine
    /// raises ObjectDisposedException. Methods are thread-safe; calls on one engine are
    /// serialised. The native handle is held by a SafeHandle: an engine left to the
    /// garbage collector is released by it, and Dispose may be called any number of
    /// times.
    /// </summary>
    public sealed class Engine : IDisposable
    {
        private readonly NativeHandle handle;
        private readonly object gate = new object();

        private static volatile bool nativeLoaded;
        private static volatile IReadOnlyList<KernelInfo> kernels;

        // Loads the native library on first use, so that a missing library is a
        // DllNotFoundException that says where Mono looked, not a
        // TypeInitializationException.
        private static void EnsureNative()
        {
            if (nativeLoaded) return;
            try
            {
                TiledMMNative.tmm_version();
                nativeLoaded = true;
            }
            catch (Exception e) when (e is DllNotFoundException || e is TypeInitializationException)
            {
                string here = Path.GetDirectoryName(typeof(Engine).Assembly.Location);
                throw new DllNotFoundException(
                    "tiledmm: cannot load libtiledmm_csharp.so (which needs libtiledmm.so.1). " +
                    "Mono looked beside the assembly (" + here + "), in LD_LIBRARY_PATH (" +
                    (Environment.GetEnvironmentVariable("LD_LIBRARY_PATH") ?? "unset") +
                    ") and in the system library directories. Install the libtiledmm-cil " +
                    "package, or put the library in one of those places.", e);
            }
        }

        /// <summary>An engine on the best backend: CUDA device 0 if usable, else the CPU; or,
        /// where CUDA is usable and the environment variable TMM_DEVICES names devices
        /// ("all", "0,1"), an engine over those devices (as Engine(int[])), as tmm_create
        /// does.</summary>
        public Engine()
        {
            EnsureNative();
            handle = Create(cell => TiledMMNative.tmm_create(cell));
        }

        /// <summary>An engine on a chosen backend; device is the CUDA device index.</summary>
        public Engine(Backend backend, int device)
        {
            EnsureNative();
            handle = Create(cell => TiledMMNative.tmm_create_with_backend(cell, (int)backend, device));
        }

        /// <summary>
        /// A CUDA engine over several devices (since 1.2): its host-array calls (Sgemm, Dgemm
        /// and their batched forms) share each large product's tiles between the devices,
        /// each taking the next as it finishes the last. null or an empty array: every
        /// device; a device may be listed twice. See tmm_create_with_devices in tiledmm.h.
        /// No usable device, or an index that does not exist: TiledMMException(NoDevice);
        /// more than 64: TiledMMException(InvalidValue).
        /// </summary>
        public Engine(int[] devices)
        {
            EnsureNative();
            int count = devices == null ? 0 : devices.Length;
            if (count > 64) throw Error((int)Status.InvalidValue, "count must be 0 to 64 (got " + count + ")");
            SWIGTYPE_p_int list = TiledMMNative.new_tmmb_int_array(Math.Max(1, count));
            try
            {
                for (int i = 0; i < count; ++i) TiledMMNative.tmmb_int_array_setitem(list, i, devices[i]);
                handle = Create(cell => TiledMMNative.tmm_create_with_devices(
                    cell, count == 0 ? null : list, count));
            }
            finally
            {
                TiledMMNative.delete_tmmb_int_array(list);
            }
        }

        // A native handle from one of the tmm_create functions, owned at once.
        private static NativeHandle Create(Func<SWIGTYPE_p_p_tmm_context_s, int> create)
        {
            var owner = new NativeHandle();
            SWIGTYPE_p_p_tmm_context_s cell = TiledMMNative.new_tmmb_handle_cell();
            try
            {
                int status = create(cell);
                if (status != 0)
                {
                    owner.Dispose();  // still empty: nothing to release
                    throw Error(status, TiledMMNative.tmm_get_error_message(NativeHandle.Null));
                }
                owner.Adopt(TiledMMNative.tmmb_handle_cell_value(cell));
            }
            finally
            {
                TiledMMNative.delete_tmmb_handle_cell(cell);
            }
            return owner;
        }

        /// <summary>Releases the native handle; calling it again does nothing.</summary>
        public void Dispose()
        {
            lock (gate) handle.Dispose();
        }

        /// <summary>The version of the loaded native library, MAJOR*10000 + MINOR*100 + PATCH.</summary>
        public static int Version
        {
            get { EnsureNative(); return TiledMMNative.tmm_version(); }
        }

        /// <summary>The version this binding was built against.</summary>
        public static int BindingVersion
        {
            get { EnsureNative(); return TiledMMNative.TILEDMM_VERSION; }
        }

        public Backend Backend
        {
            get { lock (gate) return (Backend)GetInt(TiledMMNative.tmmb_get_backend); }
        }

        public Algorithm Algorithm
        {
            get { lock (gate) return (Algorithm)GetInt(TiledMMNative.tmmb_get_algorithm); }
            set { lock (gate) Check(TiledMMNative.tmm_set_algorithm(Live(), (int)value)); }
        }

        /// <summary>8, 16, 32 (naive, tiled, coarsened) or 16, 32, 64, 128, 256 (blocked: 16 thin, 32 small batches); 0 = default.</summary>
        public int TileSize
        {
            get { lock (gate) return GetInt(TiledMMNative.tmm_get_tile_size); }
            set { lock (gate) Check(TiledMMNative.tmm_set_tile_size(Live(), value)); }
        }

        /// <summary>Outputs per thread of the coarsened kernel: 1, 2 or 4; 0 = default.</summary>
        public int Coarsening
        {
            get { lock (gate) return GetInt(TiledMMNative.tmm_get_coarsening); }
            set { lock (gate) Check(TiledMMNative.tmm_set_coarsening(Live(), value)); }
        }

        /// <summary>
        /// Sets an option: <c>engine.SetOption(Option.HostThreads, 4)</c>. A value outside
        /// the option's bounds (<see cref="GetOptionBounds"/>), or not among the values it
        /// takes, raises TiledMMException(InvalidValue); a valid value the backend lacks
        /// raises NotSupported. Either way the setting is unchanged. Option.Algorithm takes
        /// an algorithm's number; the Algorithm property is the typed form.
        /// </summary>
        public void SetOption(Option option, long value)
        {
            lock (gate) Check(TiledMMNative.tmm_set_option(Live(), (int)option, value));
        }

        /// <summary>The value of an option on this engine.</summary>
        public long GetOption(Option option)
        {
            lock (gate)
            {
                SWIGTYPE_p_long_long cell = TiledMMNative.new_tmmb_int64_cell();
                try
                {
                    Check(TiledMMNative.tmm_get_option(Live(), (int)option, cell));
                    return TiledMMNative.tmmb_int64_cell_value(cell);
                }
                finally
                {
                    TiledMMNative.delete_tmmb_int64_cell(cell);
                }
            }
        }

        /// <summary>The smallest and largest value an option takes, and its default, in the
        /// loaded library. An option that library does not know raises
        /// TiledMMException(InvalidValue).</summary>
        public static OptionBounds GetOptionBounds(Option option)
        {
            EnsureNative();
            SWIGTYPE_p_long_long lower = TiledMMNative.new_tmmb_int64_cell();
            SWIGTYPE_p_long_long upper = TiledMMNative.new_tmmb_int64_cell();
            SWIGTYPE_p_long_long byDefault = TiledMMNative.new_tmmb_int64_cell();
            try
            {
                int status = TiledMMNative.tmm_get_option_bounds((int)option, lower, upper, byDefault);
                if (status != 0) throw Error(status, TiledMMNative.tmm_get_error_message(NativeHandle.Null));
                return new OptionBounds
                {
                    Option = option, Lower = TiledMMNative.tmmb_int64_cell_value(lower),
                    Upper = TiledMMNative.tmmb_int64_cell_value(upper),
                    DefaultValue = TiledMMNative.tmmb_int64_cell_value(byDefault)
                };
            }
            finally
            {
                TiledMMNative.delete_tmmb_int64_cell(lower);
                TiledMMNative.delete_tmmb_int64_cell(upper);
                TiledMMNative.delete_tmmb_int64_cell(byDefault);
            }
        }

        /// <summary>The library's name of an option ("host_threads"). An option the loaded
        /// library does not know raises TiledMMException(InvalidValue).</summary>
        public static string GetOptionName(Option option)
        {
            EnsureNative();
            string name = TiledMMNative.tmm_option_name((int)option);
            if (name == null)
                throw Error((int)Status.InvalidValue, "the loaded library (version " +
                            TiledMMNative.tmm_version() + ") does not know option " + option);
            return name;
        }

        /// <summary>Every kernel of the loaded library, CPU kernels first, each with the
        /// settings that select it. Read once.</summary>
        public static IReadOnlyList<KernelInfo> Kernels
        {
            get
            {
                IReadOnlyList<KernelInfo> all = kernels;
                if (all == null)
                {
                    EnsureNative();
                    all = ReadKernels();
                    kernels = all;  // a race reads the same table twice: harmless
                }
                return all;
            }
        }

        private static IReadOnlyList<KernelInfo> ReadKernels()
        {
            var all = new List<KernelInfo>();
            using (var k = new tmm_kernel_info())
            {
                for (int index = 0; ; index++)
                {
                    int status = TiledMMNative.tmmb_get_kernel_info(index, k);
                    // InvalidValue past the last kernel; at index 0 (there are always CPU
                    // kernels) it is a real error, and its message says which.
                    if (status == (int)Status.InvalidValue && index > 0) break;
                    if (status != 0) throw Error(status, TiledMMNative.tmm_get_error_message(NativeHandle.Null));
                    all.Add(new KernelInfo
                    {
                        Name = k.name, Description = k.description, Backend = (Backend)k.backend,
                        Algorithm = (Algorithm)k.algorithm, TileSize = k.tile_size,
                        Coarsening = k.coarsening, IsDefault = k.is_default != 0,
                        MinComputeCapability = k.min_compute_capability,
                        MaxComputeCapability = k.max_compute_capability,
                        OutputsPerThread = k.outputs_per_thread, MathMode = (MathMode)k.math_mode,
                        Precision = (Precision)k.precision
                    });
                }
            }
            return all.AsReadOnly();
        }

        /// <summary>
        /// C = alpha * op(A) * op(B) + beta * C, with op(A) m x k, op(B) k x n and C m x n,
        /// each matrix starting at its offset. BLAS semantics; beta = 0 never reads C.
        /// </summary>
        public void Sgemm(Layout layout, Transpose transA, Transpose transB, long m, long n, long k,
                          float alpha, float[] a, int offsetA, long lda, float[] b, int offsetB,
                          long ldb, float beta, float[] c, int offsetC, long ldc)
        {
            Shapes.Check(layout, transA, transB, m, n, k, alpha, a, offsetA, lda, b, offsetB, ldb,
                         c, offsetC, ldc);
            lock (gate)
            {
                Check(TiledMMNative.tmmb_sgemm(Live(), (int)layout, (int)transA, (int)transB, m, n,
                                                k, alpha, a, offsetA, lda, b, offsetB, ldb, beta,
                                                c, offsetC, ldc));
            }
        }

        /// <summary>Sgemm with every offset 0.</summary>
        public void Sgemm(Layout layout, Transpose transA, Transpose transB, long m, long n, long k,
                          float alpha, float[] a, long lda, float[] b, long ldb, float beta,
                          float[] c, long ldc) =>
            Sgemm(layout, transA, transB, m, n, k, alpha, a, 0, lda, b, 0, ldb, beta, c, 0, ldc);

        /// <summary>
        /// Sgemm in double precision: C = alpha * op(A) * op(B) + beta * C on double[]
        /// arrays, each matrix starting at its offset, with every product and sum in FP64.
        /// The same arguments, checks and exceptions (leading dimensions and offsets count
        /// doubles); the report of the call says Precision.Double.
        /// </summary>
        public void Dgemm(Layout layout, Transpose transA, Transpose transB, long m, long n, long k,
                          double alpha, double[] a, int offsetA, long lda, double[] b, int offsetB,
                          long ldb, double beta, double[] c, int offsetC, long ldc)
        {
            Shapes.Check(layout, transA, transB, m, n, k, alpha, a, offsetA, lda, b, offsetB, ldb,
                         c, offsetC, ldc);
            lock (gate)
            {
                Check(TiledMMNative.tmmb_dgemm(Live(), (int)layout, (int)transA, (int)transB, m, n,
                                                k, alpha, a, offsetA, lda, b, offsetB, ldb, beta,
                                                c, offsetC, ldc));
            }
        }

        /// <summary>Dgemm with every offset 0.</summary>
        public void Dgemm(Layout layout, Transpose transA, Transpose transB, long m, long n, long k,
                          double alpha, double[] a, long lda, double[] b, long ldb, double beta,
                          double[] c, long ldc) =>
            Dgemm(layout, transA, transB, m, n, k, alpha, a, 0, lda, b, 0, ldb, beta, c, 0, ldc);

        /// <summary>
        /// A strided batch of <paramref name="batch"/> products (since 1.2): product i is
        /// C_i = alpha * op(A_i) * op(B_i) + beta * C_i, where X_i starts at
        /// offsetX + i * strideX of its array (strides count floats; 0 for A or B shares
        /// one matrix among every product). Sgemm's arguments, rules and exceptions
        /// otherwise; products of C must share no element with each other or with A or B.
        /// Each array must hold the last product's footprint.
        /// </summary>
        public void SgemmStridedBatched(Layout layout, Transpose transA, Transpose transB, long m,
                                        long n, long k, float alpha, float[] a, int offsetA,
                                        long lda, long strideA, float[] b, int offsetB, long ldb,
                                        long strideB, float beta, float[] c, int offsetC, long ldc,
                                        long strideC, long batch)
        {
            Shapes.CheckBatched(layout, transA, transB, m, n, k, alpha, a, offsetA, lda, strideA, b,
                                offsetB, ldb, strideB, c, offsetC, ldc, strideC, batch);
            lock (gate)
            {
                Check(TiledMMNative.tmmb_sgemm_strided_batched(
                    Live(), (int)layout, (int)transA, (int)transB, m, n, k, alpha, a, offsetA, lda,
                    strideA, b, offsetB, ldb, strideB, beta, c, offsetC, ldc, strideC, batch));
            }
        }

        /// <summary>SgemmStridedBatched in double precision (strides count doubles).</summary>
        public void DgemmStridedBatched(Layout layout, Transpose transA, Transpose transB, long m,
                                        long n, long k, double alpha, double[] a, int offsetA,
                                        long lda, long strideA, double[] b, int offsetB, long ldb,
                                        long strideB, double beta, double[] c, int offsetC,
                                        long ldc, long strideC, long batch)
        {
            Shapes.CheckBatched(layout, transA, transB, m, n, k, alpha, a, offsetA, lda, strideA, b,
                                offsetB, ldb, strideB, c, offsetC, ldc, strideC, batch);
            lock (gate)
            {
                Check(TiledMMNative.tmmb_dgemm_strided_batched(
                    Live(), (int)layout, (int)transA, (int)transB, m, n, k, alpha, a, offsetA, lda,
                    strideA, b, offsetB, ldb, strideB, beta, c, offsetC, ldc, strideC, batch));
            }
        }

        /// <summary>Compute time of the last successful Sgemm or Dgemm, in milliseconds.</summary>
        public double LastTime
        {
            get
            {
                lock (gate)
                {
                    SWIGTYPE_p_double cell = TiledMMNative.new_tmmb_double_cell();
                    try
                    {
                        Check(TiledMMNative.tmm_get_last_time(Live(), cell));
                        return TiledMMNative.tmmb_double_cell_value(cell);
                    }
                    finally
                    {
                        TiledMMNative.delete_tmmb_double_cell(cell);
                    }
                }
            }
        }

        /// <summary>The report of the last successful Sgemm or Dgemm: times, backend and
        /// device, the algorithm, math mode, tile and split-K that ran, host threads, the
        /// kernel's name and the precision (Single or Double).</summary>
        public Report LastReport
        {
            get
            {
                lock (gate)
                {
                    using (var r = new tmm_report())
                    {
                        Check(TiledMMNative.tmmb_get_last_report(Live(), r));
                        return new Report
                        {
                            TotalMs = r.total_ms, UploadMs = r.upload_ms, ComputeMs = r.compute_ms,
                            DownloadMs = r.download_ms, Backend = (Backend)r.backend,
                            Device = r.device, Algorithm = (Algorithm)r.algorithm,
                            TileSize = r.tile_size, Coarsening = r.coarsening, Splits = r.splits,
                            HostThreads = r.host_threads, Kernel = r.kernel,
                            HostPath = (HostPath)r.host_path, Tiles = r.tiles, KChunks = r.k_chunks,
                            PackMs = r.pack_ms, LinkMs = r.link_ms, MathMode = (MathMode)r.math_mode,
                            Precision = (Precision)r.precision, Batch = r.batch,
                            DeviceCount = r.device_count, HostBytes = r.host_bytes
                        };
                    }
                }
            }
        }

        /// <summary>Upload, compute, download and total time of the last successful Sgemm or
        /// Dgemm.</summary>
        public Timing LastTiming
        {
            get
            {
                lock (gate)
                {
                    using (var t = new tmm_timing())
                    {
                        Check(TiledMMNative.tmm_get_last_timing(Live(), t));
                        return new Timing
                        {
                            UploadMs = t.upload_ms, ComputeMs = t.compute_ms,
                            DownloadMs = t.download_ms, TotalMs = t.total_ms,
                            Algorithm = (Algorithm)t.algorithm, TileSize = t.tile_size,
                            Coarsening = t.coarsening
                        };
                    }
                }
            }
        }

        /// <summary>The engine's GPU (the first of several); a CPU engine raises
        /// TiledMMException(NotSupported).</summary>
        public DeviceInfo DeviceInfo
        {
            get
            {
                lock (gate)
                {
                    using (var d = new tmm_device_info())
                    {
                        Check(TiledMMNative.tmm_get_device_info(Live(), d));
                        return ToDeviceInfo(d);
                    }
                }
            }
        }

        /// <summary>The devices the engine computes on (since 1.2): as many as an engine over
        /// several devices lists, 1 for one device; a CPU engine raises
        /// TiledMMException(NotSupported).</summary>
        public int DeviceCount
        {
            get { lock (gate) return GetInt(TiledMMNative.tmm_get_device_count); }
        }

        /// <summary>Entry index (0 to DeviceCount - 1) of the engine's devices (since 1.2);
        /// another index raises TiledMMException(InvalidValue), a CPU engine
        /// NotSupported.</summary>
        public DeviceInfo GetDeviceInfo(int index)
        {
            lock (gate)
            {
                using (var d = new tmm_device_info())
                {
                    Check(TiledMMNative.tmm_get_device_info_at(Live(), index, d));
                    return ToDeviceInfo(d);
                }
            }
        }

        /// <summary>What entry index of the engine's devices did in the last successful call
        /// (since 1.2); no call yet or another index: TiledMMException(InvalidValue); a CPU
        /// engine NotSupported.</summary>
        public DeviceReport GetDeviceReport(int index)
        {
            lock (gate)
            {
                using (var r = new tmm_device_report())
                {
                    Check(TiledMMNative.tmmb_get_last_device_report(Live(), index, r));
                    return new DeviceReport
                    {
                        Device = r.device, HostThreads = r.host_threads, Tiles = r.tiles,
                        PanelUploads = r.panel_uploads, UploadBytes = r.upload_bytes,
                        DownloadBytes = r.download_bytes, HostBytes = r.host_bytes,
                        StartMs = r.start_ms, EndMs = r.end_ms, ComputeMs = r.compute_ms,
                        LinkMs = r.link_ms, PackMs = r.pack_ms
                    };
                }
            }
        }

        private static DeviceInfo ToDeviceInfo(tmm_device_info d) => new DeviceInfo
        {
            Name = d.name, Device = d.device,
            ComputeCapabilityMajor = d.compute_capability_major,
            ComputeCapabilityMinor = d.compute_capability_minor,
            Multiprocessors = d.multiprocessors,
            GlobalMemoryBytes = d.global_memory_bytes,
            SharedMemoryPerBlockBytes = d.shared_memory_per_block_bytes,
            SharedMemoryPerMultiprocessorBytes = d.shared_memory_per_multiprocessor_bytes,
            L2CacheBytes = d.l2_cache_bytes
        };

        /// <summary>
        /// Allocates now the pinned host staging of the streamed host path
        /// (HostPath.Streamed), so that the first large Sgemm or Dgemm does not pay for it
        /// (pinning host memory takes tens of milliseconds per GiB):
        /// <c>engine.ReserveHostStaging(0)</c>.
        /// bytes is 0 for the engine's staging budget (Option.HostStagingBytes, default
        /// 512 MiB) or at most that budget; more raises TiledMMException(InvalidValue), and
        /// memory that cannot be had raises OutOfMemory (the engine works on). The staging
        /// belongs to the device and is shared by every engine of the process on it. A CPU
        /// engine has no staging: a no-op. A negative bytes raises
        /// ArgumentOutOfRangeException before any native code runs.
        /// </summary>
        public void ReserveHostStaging(long bytes)
        {
            if (bytes < 0)
                throw new ArgumentOutOfRangeException(nameof(bytes), bytes, "bytes must not be negative");
            lock (gate) Check(TiledMMNative.tmm_reserve_host_staging(Live(), bytes));
        }

        /// <summary>Waits for all work the engine queued.</summary>
        public void Synchronize()
        {
            lock (gate) Check(TiledMMNative.tmm_synchronize(Live()));
        }

        private NativeHandle Live()
        {
            if (handle.IsClosed) throw new ObjectDisposedException(nameof(Engine));
            return handle;
        }

        private int GetInt(Func<NativeHandle, SWIGTYPE_p_int, int> getter)
        {
            SWIGTYPE_p_int cell = TiledMMNative.new_tmmb_int_cell();
            try
            {
                Check(getter(Live(), cell));
                return TiledMMNative.tmmb_int_cell_value(cell);
            }
            finally
            {
                TiledMMNative.delete_tmmb_int_cell(cell);
            }
        }

        private void Check(int status)
        {
            if (status != 0) throw Error(status, TiledMMNative.tmm_get_error_message(handle));
        }

        // Internal for the tests.
        internal static TiledMMException Error(int status, string detail)
        {
            string text = TiledMMNative.tmm_status_string(status);
            return new TiledMMException((Status)status,
                                        string.IsNullOrEmpty(detail) ? text : text + ": " + detail);
        }
    }

    /// <summary>
    /// The checks that keep a wrong argument from reaching native code with an array too
    /// short for it: for each matrix the call reads or writes, its CBLAS footprint
    /// ((outer - 1) * ld + inner elements from its offset) must fit in its array. Invalid
    /// sizes and leading dimensions are left to the library, which rejects them first.
    /// One check for both precisions: the arrays are float[] (Sgemm) or double[] (Dgemm),
    /// and alpha is Sgemm's float or Dgemm's double.
    /// </summary>
    internal static class Shapes
    {
        internal static void Check(Layout layout, Transpose transA, Transpose transB, long m,
                                   long n, long k, double alpha, Array a, long offsetA, long lda,
                                   Array b, long offsetB, long ldb, Array c, long offsetC,
                                   long ldc)
        {
            if (m < 0 || n < 0 || k < 0) return;  // the library says which one is negative
            bool row = layout == Layout.RowMajor;
            bool usesC = m > 0 && n > 0;
            bool usesAB = usesC && k > 0 && alpha != 0.0;
            bool ta = transA == Transpose.Trans, tb = transB == Transpose.Trans;
            Matrix("A", usesAB, row, ta ? k : m, ta ? m : k, lda, a, offsetA);
            Matrix("B", usesAB, row, tb ? n : k, tb ? k : n, ldb, b, offsetB);
            Matrix("C", usesC, row, m, n, ldc, c, offsetC);
        }

        // A strided batch: each matrix's footprint is its last product's, (batch - 1) *
        // stride past the first's. A negative batch or stride is left to the library, which
        // rejects it before touching anything; batch 0 uses no matrix.
        internal static void CheckBatched(Layout layout, Transpose transA, Transpose transB,
                                          long m, long n, long k, double alpha, Array a,
                                          long offsetA, long lda, long strideA, Array b,
                                          long offsetB, long ldb, long strideB, Array c,
                                          long offsetC, long ldc, long strideC, long batch)
        {
            if (m < 0 || n < 0 || k < 0 || batch < 0 || strideA < 0 || strideB < 0 || strideC < 0)
                return;
            bool row = layout == Layout.RowMajor;
            bool usesC = m > 0 && n > 0 && batch > 0;
            bool usesAB = usesC && k > 0 && alpha != 0.0;
            bool ta = transA == Transpose.Trans, tb = transB == Transpose.Trans;
            long last = Math.Max(batch - 1, 0);
            Matrix("A", usesAB, row, ta ? k : m, ta ? m : k, lda, a, offsetA, last, strideA);
            Matrix("B", usesAB, row, tb ? n : k, tb ? k : n, ldb, b, offsetB, last, strideB);
            Matrix("C", usesC, row, m, n, ldc, c, offsetC, last, strideC);
        }

        private static void Matrix(string name, bool used, bool row, long rows, long cols, long ld,
                                   Array array, long offset, long last = 0, long stride = 0)
        {
            if (offset < 0) throw new ArgumentOutOfRangeException(name, "negative offset " + offset);
            if (!used) return;
            if (array == null) throw new ArgumentNullException(name, name + " is null but the call needs it");
            long outer = row ? rows : cols, inner = row ? cols : rows;
            if (ld < inner) return;  // invalid leading dimension: the library rejects it
            long needed;
            try
            {
                needed = checked(last * stride + (outer - 1) * ld + inner + offset);
            }
            catch (OverflowException e)
            {
                throw new ArgumentException(name + ": size overflows a long", name, e);
            }
            if (needed > array.Length)
                throw new ArgumentException(name + " needs " + needed + " elements (offset " +
                                            offset + ", ld " + ld + ") but has " + array.Length, name);
        }
    }
}
