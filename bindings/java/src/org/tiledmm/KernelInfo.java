package org.tiledmm;

/**
 * One kernel of the loaded library ({@link Engine#getKernels()}): what it is, where it
 * runs and the settings that select it. Every field of the C struct
 * {@code tmm_kernel_info}.
 */
public final class KernelInfo {
  private final String name;
  private final String description;
  private final Backend backend;
  private final Algorithm algorithm;
  private final int tileSize;
  private final int coarsening;
  private final boolean isDefault;
  private final int minComputeCapability;
  private final int maxComputeCapability;
  private final int outputsPerThread;
  private final MathMode mathMode;
  private final Precision precision;

  KernelInfo(tmm_kernel_info k) {
    name = k.getName();
    description = k.getDescription();
    backend = Backend.of(k.getBackend());
    algorithm = Algorithm.of(k.getAlgorithm());
    tileSize = k.getTile_size();
    coarsening = k.getCoarsening();
    isDefault = k.getIs_default() != 0;
    minComputeCapability = k.getMin_compute_capability();
    maxComputeCapability = k.getMax_compute_capability();
    outputsPerThread = k.getOutputs_per_thread();
    mathMode = MathMode.of(k.getMath_mode());
    precision = Precision.of((int) k.getPrecision());
  }

  /** Elements of C one thread computes (0: not fixed). */
  public int getOutputsPerThread() {
    return outputsPerThread;
  }

  /** Its name, as {@link Report#getKernel()} reports it: "blocked_128x256", "cpu_naive". */
  public String getName() {
    return name;
  }

  /** One line. */
  public String getDescription() {
    return description;
  }

  /** CUDA or CPU. */
  public Backend getBackend() {
    return backend;
  }

  /** The algorithm setting ({@link Option#ALGORITHM}) that selects it. */
  public Algorithm getAlgorithm() {
    return algorithm;
  }

  /** The tile size setting ({@link Option#TILE_SIZE}) that selects it; 0: none. */
  public int getTileSize() {
    return tileSize;
  }

  /** The coarsening setting ({@link Option#COARSENING}) that selects it; 0: none. */
  public int getCoarsening() {
    return coarsening;
  }

  /** Whether tile size and coarsening 0 select it (for its algorithm and backend). */
  public boolean isDefault() {
    return isDefault;
  }

  /** CUDA: the least compute capability it runs on, major * 10 + minor; CPU: 0. */
  public int getMinComputeCapability() {
    return minComputeCapability;
  }

  /** CUDA: the greatest compute capability it runs on (999: no limit); CPU: 0. */
  public int getMaxComputeCapability() {
    return maxComputeCapability;
  }

  /**
   * Its arithmetic: a kernel other than FP32 runs only where {@link Option#MATH_MODE}
   * allows it.
   */
  public MathMode getMathMode() {
    return mathMode;
  }

  /**
   * The element type it multiplies (since 1.2): SINGLE kernels run the float calls of this
   * binding; DOUBLE ones run the C library's tmm_dgemm, which this binding does not call yet.
   */
  public Precision getPrecision() {
    return precision;
  }

  @Override
  public String toString() {
    return String.format("%s (%s %s %s %s, tile %d, coarsening %d%s): %s", name, backend,
        precision, algorithm, mathMode, tileSize, coarsening, isDefault ? ", default" : "",
        description);
  }
}
