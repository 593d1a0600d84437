package org.tiledmm;

/**
 * The CUDA device of an engine.
 *
 * <p>The public fields are the 1.0 form, deprecated for the 1.x series: use the getters.
 */
public final class DeviceInfo {
  /** @deprecated use {@link #getName()}. */
  @Deprecated public final String name;
  /** @deprecated use {@link #getDevice()}. */
  @Deprecated public final int device;
  /** @deprecated use {@link #getComputeCapabilityMajor()}. */
  @Deprecated public final int computeCapabilityMajor;
  /** @deprecated use {@link #getComputeCapabilityMinor()}. */
  @Deprecated public final int computeCapabilityMinor;
  /** @deprecated use {@link #getMultiprocessors()}. */
  @Deprecated public final int multiprocessors;
  /** @deprecated use {@link #getGlobalMemoryBytes()}. */
  @Deprecated public final long globalMemoryBytes;
  /** @deprecated use {@link #getSharedMemoryPerBlockBytes()}. */
  @Deprecated public final long sharedMemoryPerBlockBytes;
  /** @deprecated use {@link #getSharedMemoryPerMultiprocessorBytes()}. */
  @Deprecated public final long sharedMemoryPerMultiprocessorBytes;
  /** @deprecated use {@link #getL2CacheBytes()}. */
  @Deprecated public final long l2CacheBytes;

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

  public String getName() {
    return name;
  }

  /** The CUDA device index. */
  public int getDevice() {
    return device;
  }

  public int getComputeCapabilityMajor() {
    return computeCapabilityMajor;
  }

  public int getComputeCapabilityMinor() {
    return computeCapabilityMinor;
  }

  public int getMultiprocessors() {
    return multiprocessors;
  }

  public long getGlobalMemoryBytes() {
    return globalMemoryBytes;
  }

  /** Shared memory per block, without opt-in. */
  public long getSharedMemoryPerBlockBytes() {
    return sharedMemoryPerBlockBytes;
  }

  public long getSharedMemoryPerMultiprocessorBytes() {
    return sharedMemoryPerMultiprocessorBytes;
  }

  public long getL2CacheBytes() {
    return l2CacheBytes;
  }

  @Override
  public String toString() {
    return String.format("%s (compute capability %d.%d, %d SMs, %.1f GiB)", name,
        computeCapabilityMajor, computeCapabilityMinor, multiprocessors,
        globalMemoryBytes / (double) (1L << 30));
  }
}
