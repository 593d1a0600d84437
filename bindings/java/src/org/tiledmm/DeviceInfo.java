package org.tiledmm;

/** The CUDA device of a handle. */
public final class DeviceInfo {
  public final String name;
  public final int device;
  public final int computeCapabilityMajor;
  public final int computeCapabilityMinor;
  public final int multiprocessors;
  public final long globalMemoryBytes;
  public final long sharedMemoryPerBlockBytes;
  public final long sharedMemoryPerMultiprocessorBytes;
  public final long l2CacheBytes;

  DeviceInfo(tmm_device_info d) {
    name = d.getName();
    device = d.getDevice();
    computeCapabilityMajor = d.getCompute_capability_major();
    computeCapabilityMinor = d.getCompute_capability_minor();
    multiprocessors = d.getMultiprocessors();
    globalMemoryBytes = d.getGlobal_memory_bytes().longValue();
    sharedMemoryPerBlockBytes = d.getShared_memory_per_block_bytes().longValue();
    sharedMemoryPerMultiprocessorBytes = d.getShared_memory_per_multiprocessor_bytes().longValue();
    l2CacheBytes = d.getL2_cache_bytes().longValue();
  }

  @Override
  public String toString() {
    return String.format("%s (compute capability %d.%d, %d SMs, %.1f GiB)", name,
        computeCapabilityMajor, computeCapabilityMinor, multiprocessors,
        globalMemoryBytes / (double) (1L << 30));
  }
}
