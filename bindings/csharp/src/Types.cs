// The public types of the TiledMM binding besides Engine: the exception (and its
// deprecated 1.0 name), and the timing, report, kernel, option-bounds and device
// records. The enums (Status, Layout, Transpose, Backend, Algorithm, Option) are
// generated from tiledmm.h at build time (bindings/generate_enums.cmake).
using System;

namespace TiledMM
{
    // TiledMMException derives from its 1.0 name only so that 1.0 code that catches
    // TiledmmException still catches every failure; 2.0 drops TiledmmException and
    // derives this from Exception, with the Status property.
#pragma warning disable 618
    /// <summary>A call into tiledmm failed: <see cref="TiledmmException.Status"/> says
    /// how, the message why.</summary>
    public class TiledMMException : TiledmmException
#pragma warning restore 618
    {
        public TiledMMException(Status status, string message) : base(status, message) { }
    }

    /// <summary>The 1.0 name of <see cref="TiledMMException"/>, which every failure
    /// raises; kept for the 1.x series.</summary>
    [Obsolete("use TiledMMException")]
    public class TiledmmException : Exception
    {
        /// <summary>The library's status code.</summary>
        public Status Status { get; }

        public TiledmmException(Status status, string message) : base(message)
        {
            Status = status;
        }
    }

    /// <summary>Where the time of the last successful Sgemm or Dgemm went, in milliseconds.</summary>
    public sealed class Timing
    {
        public double UploadMs { get; internal set; }
        public double ComputeMs { get; internal set; }
        public double DownloadMs { get; internal set; }
        public double TotalMs { get; internal set; }
        public Algorithm Algorithm { get; internal set; }
        public int TileSize { get; internal set; }
        public int Coarsening { get; internal set; }

        public override string ToString() =>
            $"{Algorithm} (tile {TileSize}, x{Coarsening}): upload {UploadMs:F3} ms, " +
            $"compute {ComputeMs:F3} ms, download {DownloadMs:F3} ms, total {TotalMs:F3} ms";
    }

    /// <summary>
    /// The report of an engine's last successful Sgemm or Dgemm
    /// (<see cref="Engine.LastReport"/>): where the time went, where it ran, which kernel
    /// ran and in which precision. Every field of the C struct tmm_report; a field the
    /// loaded library does not fill (one older than this binding) reads 0, or null for the
    /// kernel.
    /// </summary>
    public sealed class Report
    {
        /// <summary>The whole call, copies included, in milliseconds.</summary>
        public double TotalMs { get; internal set; }
        /// <summary>Host to device copies (0 for device memory and the CPU).</summary>
        public double UploadMs { get; internal set; }
        /// <summary>The kernel(s).</summary>
        public double ComputeMs { get; internal set; }
        /// <summary>Device to host copy (0 for device memory and the CPU).</summary>
        public double DownloadMs { get; internal set; }
        /// <summary>Where it ran: Cuda or Cpu.</summary>
        public Backend Backend { get; internal set; }
        /// <summary>The CUDA device index; -1 on the CPU.</summary>
        public int Device { get; internal set; }
        /// <summary>The algorithm that ran (never Auto).</summary>
        public Algorithm Algorithm { get; internal set; }
        /// <summary>The tile edge that ran (0 where it does not apply).</summary>
        public int TileSize { get; internal set; }
        /// <summary>Outputs per thread that ran (0 where it does not apply).</summary>
        public int Coarsening { get; internal set; }
        /// <summary>Slices of k run as separate blocks (split-K); 1 = none.</summary>
        public int Splits { get; internal set; }
        /// <summary>CPU threads that computed (CPU backend), else 0.</summary>
        public int HostThreads { get; internal set; }
        /// <summary>The name of the kernel that ran, as <see cref="KernelInfo.Name"/>
        /// ("blocked_128x256", "cpu_blocked"); the library reports others for products that
        /// ran no multiplication kernel (only C = beta * C, or nothing).</summary>
        public string Kernel { get; internal set; }
        /// <summary>The path a host-memory Sgemm or Dgemm took on CUDA (Direct or Streamed);
        /// Auto otherwise.</summary>
        public HostPath HostPath { get; internal set; }
        /// <summary>Tiles of C the streamed path cut the product into (1 otherwise).</summary>
        public long Tiles { get; internal set; }
        /// <summary>Chunks of k per tile (1 otherwise).</summary>
        public long KChunks { get; internal set; }
        /// <summary>Host time spent packing into and out of staging, in milliseconds.</summary>
        public double PackMs { get; internal set; }
        /// <summary>Time host-device copies kept the link busy (streamed path), in milliseconds.</summary>
        public double LinkMs { get; internal set; }
        /// <summary>The arithmetic of the kernel that ran: Fp32 whenever the strict kernel ran
        /// (the CPU, products that ran no multiplication kernel, a mode with no kernel for the
        /// call), so it may differ from what <see cref="Option.MathMode"/> allows. A Dgemm
        /// says Fp32: strict, in its precision (see <see cref="Precision"/>).</summary>
        public MathMode MathMode { get; internal set; }
        /// <summary>The element type of the product (since 1.2): Single after an Sgemm, Double
        /// after a Dgemm.</summary>
        public Precision Precision { get; internal set; }
        /// <summary>The products of the call (since 1.2): 1 for Sgemm and Dgemm, the batch of
        /// a strided batched call (0 for an empty one).</summary>
        public long Batch { get; internal set; }
        /// <summary>The devices that computed tiles of the call (since 1.2): up to as many
        /// as an engine over several devices lists (<see cref="Engine.GetDeviceReport"/> for
        /// each), 1 for every other CUDA call, 0 on the CPU.</summary>
        public long DeviceCount { get; internal set; }
        /// <summary>Bytes the streamed path's packing threads moved into and out of staging
        /// (since 1.2); over <see cref="PackMs"/>, the host's packing rate.</summary>
        public long HostBytes { get; internal set; }

        /// <summary>For example "cpu_blocked on Cpu (Blocked, Fp32, 4 host threads): upload 0.000 ms, ...".</summary>
        public override string ToString() =>
            $"{Kernel} on {Backend}{(Device >= 0 ? " " + Device : "")} ({Algorithm}, {MathMode}" +
            (TileSize > 0 ? $", tile {TileSize}" : "") + (Coarsening > 0 ? $", x{Coarsening}" : "") +
            (Splits > 1 ? $", split-K {Splits}" : "") +
            (HostThreads > 0 ? $", {HostThreads} host thread(s)" : "") +
            (HostPath == HostPath.Streamed ? $", streamed: {Tiles} tiles x {KChunks} chunks" : "") +
            $"): upload {UploadMs:F3} ms, compute {ComputeMs:F3} ms, download {DownloadMs:F3} ms, " +
            $"total {TotalMs:F3} ms";
    }

    /// <summary>One kernel of the loaded library (<see cref="Engine.Kernels"/>): what it is,
    /// where it runs and the settings that select it. Every field of the C struct
    /// tmm_kernel_info.</summary>
    public sealed class KernelInfo
    {
        /// <summary>Its name, as <see cref="Report.Kernel"/> reports it: "blocked_128x256",
        /// "cpu_naive".</summary>
        public string Name { get; internal set; }
        /// <summary>One line.</summary>
        public string Description { get; internal set; }
        /// <summary>Cuda or Cpu.</summary>
        public Backend Backend { get; internal set; }
        /// <summary>The algorithm setting (<see cref="Option.Algorithm"/>) that selects it.</summary>
        public Algorithm Algorithm { get; internal set; }
        /// <summary>The tile size setting (<see cref="Option.TileSize"/>) that selects it; 0: none.</summary>
        public int TileSize { get; internal set; }
        /// <summary>The coarsening setting (<see cref="Option.Coarsening"/>) that selects it; 0: none.</summary>
        public int Coarsening { get; internal set; }
        /// <summary>Whether tile size and coarsening 0 select it (for its algorithm and backend).</summary>
        public bool IsDefault { get; internal set; }
        /// <summary>CUDA: the least compute capability it runs on, major * 10 + minor; CPU: 0.</summary>
        public int MinComputeCapability { get; internal set; }
        /// <summary>CUDA: the greatest compute capability it runs on (999: no limit); CPU: 0.</summary>
        public int MaxComputeCapability { get; internal set; }
        /// <summary>Elements of C one thread computes (0: not fixed).</summary>
        public int OutputsPerThread { get; internal set; }
        /// <summary>Its arithmetic: a kernel other than Fp32 runs only where
        /// <see cref="Option.MathMode"/> allows it.</summary>
        public MathMode MathMode { get; internal set; }
        /// <summary>The element type it multiplies (since 1.2): Single kernels run the float
        /// calls of this binding; Double ones run the C library's tmm_dgemm, which this binding
        /// does not call yet.</summary>
        public Precision Precision { get; internal set; }

        public override string ToString() =>
            $"{Name} ({Backend} {Precision} {Algorithm} {MathMode}, tile {TileSize}, coarsening {Coarsening}" +
            $"{(IsDefault ? ", default" : "")}): {Description}";
    }

    /// <summary>The values an <see cref="TiledMM.Option"/> takes and its default
    /// (<see cref="Engine.GetOptionBounds"/>). Some options take only some values between
    /// the bounds (tile sizes: those of the kernels, <see cref="Engine.Kernels"/>).</summary>
    public sealed class OptionBounds
    {
        /// <summary>The option these bounds are of.</summary>
        public Option Option { get; internal set; }
        /// <summary>The smallest value the option takes.</summary>
        public long Lower { get; internal set; }
        /// <summary>The largest value the option takes.</summary>
        public long Upper { get; internal set; }
        /// <summary>The value a new engine has.</summary>
        public long DefaultValue { get; internal set; }

        /// <summary>Whether value lies within the bounds (inclusive).</summary>
        public bool Contains(long value) => value >= Lower && value <= Upper;

        public override string ToString() => $"{Option} in [{Lower}, {Upper}], default {DefaultValue}";
    }

    /// <summary>What one device of an engine did in its last successful call (since 1.2):
    /// <see cref="Engine.GetDeviceReport"/>. On an engine of one device, entry 0 is the call
    /// itself.</summary>
    public sealed class DeviceReport
    {
        /// <summary>The CUDA device index of this entry.</summary>
        public int Device { get; internal set; }
        /// <summary>The packing threads it had (streamed path; 0 when it took no part in
        /// the call).</summary>
        public int HostThreads { get; internal set; }
        /// <summary>Tiles of C it computed (0: none reached it; 1 for a call it computed off
        /// the streamed path).</summary>
        public long Tiles { get; internal set; }
        /// <summary>Column tiles it began: panels of op(B) it uploaded.</summary>
        public long PanelUploads { get; internal set; }
        /// <summary>Bytes it copied from the host to its device (streamed path).</summary>
        public long UploadBytes { get; internal set; }
        /// <summary>Bytes it copied from its device to the host (streamed path).</summary>
        public long DownloadBytes { get; internal set; }
        /// <summary>Bytes its packing threads moved through staging.</summary>
        public long HostBytes { get; internal set; }
        /// <summary>Its first product, in ms from the call's start (the streamed path; else
        /// 0).</summary>
        public double StartMs { get; internal set; }
        /// <summary>Its last tile in C, in ms from the call's start (the streamed path; else
        /// 0).</summary>
        public double EndMs { get; internal set; }
        /// <summary>Its device's span from the first product to the last epilogue.</summary>
        public double ComputeMs { get; internal set; }
        /// <summary>Time its copies kept its link busy.</summary>
        public double LinkMs { get; internal set; }
        /// <summary>Host time its packing threads spent.</summary>
        public double PackMs { get; internal set; }

        public override string ToString() =>
            $"device {Device}: {Tiles} tiles, {PanelUploads} panels, {StartMs:F1}-{EndMs:F1} ms";
    }

    /// <summary>The CUDA device of a handle.</summary>
    public sealed class DeviceInfo
    {
        public string Name { get; internal set; }
        public int Device { get; internal set; }
        public int ComputeCapabilityMajor { get; internal set; }
        public int ComputeCapabilityMinor { get; internal set; }
        public int Multiprocessors { get; internal set; }
        public ulong GlobalMemoryBytes { get; internal set; }
        public ulong SharedMemoryPerBlockBytes { get; internal set; }
        public ulong SharedMemoryPerMultiprocessorBytes { get; internal set; }
        public ulong L2CacheBytes { get; internal set; }

        public override string ToString() =>
            $"{Name} (compute capability {ComputeCapabilityMajor}.{ComputeCapabilityMinor}, " +
            $"{Multiprocessors} SMs)";
    }
}
