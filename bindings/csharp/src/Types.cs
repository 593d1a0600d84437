// The public types of the TiledMM binding besides Engine: enums over the C values,
// the exception (and its deprecated 1.0 name), and the timing and device records.
using System;

namespace TiledMM
{
    /// <summary>Storage order of a matrix (the CBLAS values).</summary>
    public enum Layout { RowMajor = 101, ColMajor = 102 }

    /// <summary>Whether an operand is used as stored or transposed (the CBLAS values).</summary>
    public enum Transpose { NoTrans = 111, Trans = 112 }

    /// <summary>Where the arithmetic runs.</summary>
    public enum Backend { Auto = 0, Cuda = 1, Cpu = 2 }

    /// <summary>The kernel that computes the product; see the README's algorithm table.</summary>
    public enum Algorithm { Auto = 0, Naive = 1, Tiled = 2, Coarsened = 3, Blocked = 4 }

    /// <summary>The library's status codes.</summary>
    public enum Status
    {
        Success = 0, InvalidValue = 1, NoDevice = 2, OutOfMemory = 3, NotSupported = 4,
        Cuda = 5, Internal = 6
    }

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

    /// <summary>Where the time of the last successful sgemm went, in milliseconds.</summary>
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
