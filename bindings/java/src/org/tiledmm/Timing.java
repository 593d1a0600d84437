package org.tiledmm;

/**
 * Where the time of the last successful sgemm or dgemm went, in milliseconds, and what ran.
 *
 * <p>The public fields are the 1.0 form, deprecated for the 1.x series: use the getters.
 */
public final class Timing {
  /** @deprecated use {@link #getUploadMs()}. */
  @Deprecated public final double uploadMs;
  /** @deprecated use {@link #getComputeMs()}. */
  @Deprecated public final double computeMs;
  /** @deprecated use {@link #getDownloadMs()}. */
  @Deprecated public final double downloadMs;
  /** @deprecated use {@link #getTotalMs()}. */
  @Deprecated public final double totalMs;
  /** @deprecated use {@link #getAlgorithm()}. */
  @Deprecated public final Algorithm algorithm;
  /** @deprecated use {@link #getTileSize()}. */
  @Deprecated public final int tileSize;
  /** @deprecated use {@link #getCoarsening()}. */
  @Deprecated public final int coarsening;

  Timing(double uploadMs, double computeMs, double downloadMs, double totalMs,
      Algorithm algorithm, int tileSize, int coarsening) {
    this.uploadMs = uploadMs;
    this.computeMs = computeMs;
    this.downloadMs = downloadMs;
    this.totalMs = totalMs;
    this.algorithm = algorithm;
    this.tileSize = tileSize;
    this.coarsening = coarsening;
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

  /** The whole call, copies included. */
  public double getTotalMs() {
    return totalMs;
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

  @Override
  public String toString() {
    return String.format("%s (tile %d, x%d): upload %.3f ms, compute %.3f ms, download %.3f ms,"
        + " total %.3f ms", algorithm, tileSize, coarsening, uploadMs, computeMs, downloadMs,
        totalMs);
  }
}
