package org.tiledmm;

/** Where the time of the last successful sgemm went, in milliseconds, and what ran. */
public final class Timing {
  public final double uploadMs;
  public final double computeMs;
  public final double downloadMs;
  public final double totalMs;
  public final Algorithm algorithm;
  public final int tileSize;
  public final int coarsening;

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

  @Override
  public String toString() {
    return String.format("%s (tile %d, x%d): upload %.3f ms, compute %.3f ms, download %.3f ms,"
        + " total %.3f ms", algorithm, tileSize, coarsening, uploadMs, computeMs, downloadMs,
        totalMs);
  }
}
