package org.tiledmm;

/**
 * What one device of an engine did in its last successful call (since 1.2):
 * Engine.getDeviceReport. On an engine of one device, entry 0 is the call itself.
 */
public final class DeviceReport {
  private final int device;
  private final int hostThreads;
  private final long tiles;
  private final long panelUploads;
  private final long uploadBytes;
  private final long downloadBytes;
  private final long hostBytes;
  private final double startMs;
  private final double endMs;
  private final double computeMs;
  private final double linkMs;
  private final double packMs;

  DeviceReport(tmm_device_report r) {
    device = r.getDevice();
    hostThreads = r.getHost_threads();
    tiles = r.getTiles();
    panelUploads = r.getPanel_uploads();
    uploadBytes = r.getUpload_bytes();
    downloadBytes = r.getDownload_bytes();
    hostBytes = r.getHost_bytes();
    startMs = r.getStart_ms();
    endMs = r.getEnd_ms();
    computeMs = r.getCompute_ms();
    linkMs = r.getLink_ms();
    packMs = r.getPack_ms();
  }

  /** The CUDA device index of this entry. */
  public int getDevice() {
    return device;
  }

  /** The packing threads it had (streamed path; 0 when it took no part in the call). */
  public int getHostThreads() {
    return hostThreads;
  }

  /**
   * Tiles of C it computed (0: none reached it; 1 for a call it computed off the streamed
   * path).
   */
  public long getTiles() {
    return tiles;
  }

  /** Column tiles it began: panels of op(B) it uploaded. */
  public long getPanelUploads() {
    return panelUploads;
  }

  /** Bytes it copied from the host to its device (streamed path). */
  public long getUploadBytes() {
    return uploadBytes;
  }

  /** Bytes it copied from its device to the host (streamed path). */
  public long getDownloadBytes() {
    return downloadBytes;
  }

  /** Bytes its packing threads moved through staging. */
  public long getHostBytes() {
    return hostBytes;
  }

  /** Its first product, in ms from the call's start (the streamed path; else 0). */
  public double getStartMs() {
    return startMs;
  }

  /** Its last tile in C, in ms from the call's start (the streamed path; else 0). */
  public double getEndMs() {
    return endMs;
  }

  /** Its device's span from the first product to the last epilogue. */
  public double getComputeMs() {
    return computeMs;
  }

  /** Time its copies kept its link busy. */
  public double getLinkMs() {
    return linkMs;
  }

  /** Host time its packing threads spent. */
  public double getPackMs() {
    return packMs;
  }

  @Override
  public String toString() {
    return String.format("device %d: %d tiles, %d panels, %.1f-%.1f ms, up %d B, down %d B",
        device, tiles, panelUploads, startMs, endMs, uploadBytes, downloadBytes);
  }
}
