package org.tiledmm;

/**
 * The report of an engine's last successful sgemm or dgemm
 * ({@link Engine#getLastReport()}): where the time went, where it ran, which kernel ran
 * and in which precision. Every field of the C struct {@code tmm_report}; a field that
 * the loaded library does not fill (one older than these bindings) reads 0, or null for
 * the kernel.
 */
public final class Report {
  private final double totalMs;
  private final double uploadMs;
  private final double computeMs;
  private final double downloadMs;
  private final Backend backend;
  private final int device;
  private final Algorithm algorithm;
  private final int tileSize;
  private final int coarsening;
  private final int splits;
  private final int hostThreads;
  private final String kernel;
  private final HostPath hostPath;
  private final long tiles;
  private final long kChunks;
  private final double packMs;
  private final double linkMs;
  private final MathMode mathMode;
  private final Precision precision;
  private final long batch;
  private final long deviceCount;
  private final long hostBytes;

  Report(tmm_report r) {
    totalMs = r.getTotal_ms();
    uploadMs = r.getUpload_ms();
    computeMs = r.getCompute_ms();
    downloadMs = r.getDownload_ms();
    backend = Backend.of(r.getBackend());
    device = r.getDevice();
    algorithm = Algorithm.of(r.getAlgorithm());
    tileSize = r.getTile_size();
    coarsening = r.getCoarsening();
    splits = r.getSplits();
    hostThreads = r.getHost_threads();
    kernel = r.getKernel();
    hostPath = HostPath.of(r.getHost_path());
    tiles = r.getTiles();
    kChunks = r.getK_chunks();
    packMs = r.getPack_ms();
    linkMs = r.getLink_ms();
    mathMode = MathMode.of(r.getMath_mode());
    precision = Precision.of((int) r.getPrecision());
    batch = r.getBatch();
    deviceCount = r.getDevice_count();
    hostBytes = r.getHost_bytes();
  }

  /** The whole call, copies included, in milliseconds. */
  public double getTotalMs() {
    return totalMs;
  }

  /** Host to device copies (0 for device memory and the CPU). */
  public double getUploadMs() {
    return uploadMs;
  }

  /** The kernel(s). */
  public double getComputeMs() {
    return computeMs;
  }

  /** Device to host copy (0 for device memory and the CPU). */
  public double getDownloadMs() {
    return downloadMs;
  }

  /** Where it ran: CUDA or CPU. */
  public Backend getBackend() {
    return backend;
  }

  /** The CUDA device index; -1 on the CPU. */
  public int getDevice() {
    return device;
  }

  /** The algorithm that ran (never AUTO). */
  public Algorithm getAlgorithm() {
    return algorithm;
  }

  /** The tile edge that ran (0 where it does not apply). */
  public int getTileSize() {
    return tileSize;
  }

  /** Outputs per thread that ran (0 where it does not apply). */
  public int getCoarsening() {
    return coarsening;
  }

  /** Slices of k run as separate blocks (split-K); 1 = none. */
  public int getSplits() {
    return splits;
  }

  /** CPU threads that computed (CPU backend), else 0. */
  public int getHostThreads() {
    return hostThreads;
  }

  /**
   * The name of the kernel that ran, as in {@link KernelInfo#getName()} (for example
   * "blocked_128x256" or "cpu_blocked"); the library reports others for products that
   * ran no multiplication kernel (only C = beta * C, or nothing).
   */
  public String getKernel() {
    return kernel;
  }

  /** The path a host-memory sgemm or dgemm took on CUDA (DIRECT or STREAMED); AUTO otherwise. */
  public HostPath getHostPath() {
    return hostPath;
  }

  /** Tiles of C the streamed path cut the product into (1 otherwise). */
  public long getTiles() {
    return tiles;
  }

  /** Chunks of k per tile (1 otherwise). */
  public long getKChunks() {
    return kChunks;
  }

  /** Host time spent packing into and out of staging, in milliseconds. */
  public double getPackMs() {
    return packMs;
  }

  /** Time host-device copies kept the link busy (streamed path), in milliseconds. */
  public double getLinkMs() {
    return linkMs;
  }

  /**
   * The arithmetic of the kernel that ran: FP32 whenever the strict kernel ran (the CPU,
   * products that ran no multiplication kernel, a mode with no kernel for the call), so
   * it may differ from what {@link Option#MATH_MODE} allows. A dgemm says FP32: strict,
   * in its precision (see {@link #getPrecision()}).
   */
  public MathMode getMathMode() {
    return mathMode;
  }

  /**
   * The element type of the product (since 1.2): SINGLE after an sgemm, DOUBLE after a
   * dgemm.
   */
  public Precision getPrecision() {
    return precision;
  }

  /**
   * The products of the call (since 1.2): 1 for sgemm and dgemm, the batch of a strided
   * batched call (0 for an empty one).
   */
  public long getBatch() {
    return batch;
  }

  /**
   * The devices that computed tiles of the call (since 1.2): up to as many as an engine
   * over several devices lists (Engine.getDeviceReport for each), 1 for every other CUDA
   * call, 0 on the CPU.
   */
  public long getDeviceCount() {
    return deviceCount;
  }

  /**
   * Bytes the streamed path's packing threads moved into and out of staging (since 1.2);
   * divided by getPackMs(), the host's packing rate.
   */
  public long getHostBytes() {
    return hostBytes;
  }

  /** For example "cpu_blocked on CPU (BLOCKED, FP32, 4 host threads): upload 0.000 ms, ...". */
  @Override
  public String toString() {
    StringBuilder s = new StringBuilder().append(kernel).append(" on ").append(backend);
    if (device >= 0) s.append(' ').append(device);
    s.append(" (").append(algorithm).append(", ").append(mathMode);
    if (tileSize > 0) s.append(", tile ").append(tileSize);
    if (coarsening > 0) s.append(", x").append(coarsening);
    if (splits > 1) s.append(", split-K ").append(splits);
    if (hostThreads > 0) s.append(", ").append(hostThreads).append(" host thread(s)");
    if (hostPath == HostPath.STREAMED) {
      s.append(", streamed: ").append(tiles).append(" tiles x ").append(kChunks).append(" chunks");
    }
    return s.append(String.format("): upload %.3f ms, compute %.3f ms, download %.3f ms,"
        + " total %.3f ms", uploadMs, computeMs, downloadMs, totalMs)).toString();
  }
}
