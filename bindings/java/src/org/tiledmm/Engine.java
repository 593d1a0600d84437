package org.tiledmm;

import java.lang.ref.Cleaner;
import java.nio.Buffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A tiledmm handle: single- and double-precision matrix multiplication on a CUDA GPU or
 * the CPU.
 *
 * <pre>{@code
 * try (Engine mm = new Engine()) {
 *   mm.sgemm(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, m, n, k,
 *            1f, a, k, b, n, 0f, c, n);          // c = a * b, float[]
 *   mm.dgemm(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, m, n, k,
 *            1.0, x, k, y, n, 0.0, z, n);        // z = x * y, double[]
 *   System.out.println(mm.getLastReport());  // kernel, threads, times, precision
 * }
 * }</pre>
 *
 * <p>{@code sgemm} and {@code dgemm} take the same arguments and make the same checks,
 * on float[] / double[] arrays (with or without offsets) or direct FloatBuffers /
 * DoubleBuffers in native byte order.
 *
 * <p>Settings are options ({@link #setOption(Option, long)}; {@link #getOptionBounds}
 * says what each takes); the library's kernels are listed by {@link #getKernels()}.
 *
 * <p>Errors raise {@link TiledmmException} with the library's status and message. Arrays
 * that are too short, negative offsets and sizes, null arrays that the call needs,
 * buffers that are not direct or not in native byte order, null enum arguments and the
 * UNKNOWN constants raise {@link IllegalArgumentException} before any native code runs.
 * A closed engine raises {@link IllegalStateException}.
 * Methods are thread-safe; calls on one engine are serialised. An engine left to the
 * garbage collector is released by it.
 *
 * <p>Names follow JavaBeans (see bindings/java/tiledmm_java.i). This class is not
 * final only so that the deprecated 1.0 name {@link Tiledmm} can extend it; every
 * method is final and it is not meant to be extended.
 */
public class Engine implements AutoCloseable {
  private static final Cleaner CLEANER = Cleaner.create();
  private static final AtomicLong CREATED = new AtomicLong();
  private static final AtomicLong DESTROYED = new AtomicLong();
  private static volatile List<KernelInfo> kernels;

  static {
    NativeLoader.load();
  }

  /**
   * Owns the native handle; runs once, by close() or by the garbage collector. It must
   * not refer to the Engine, or the Engine would never become unreachable.
   */
  private static final class Release implements Runnable {
    private SWIGTYPE_p_tmm_context_s handle;

    Release(SWIGTYPE_p_tmm_context_s handle) {
      this.handle = handle;
    }

    @Override
    public synchronized void run() {
      if (handle != null) {
        TiledmmNative.tmm_destroy(handle);
        DESTROYED.incrementAndGet();
      }
      handle = null;
    }
  }

  private SWIGTYPE_p_tmm_context_s handle;
  private final Cleaner.Cleanable cleanable;

  /**
   * An engine on the best backend: CUDA device 0 if usable, else the CPU; or, where CUDA
   * is usable and the environment variable TMM_DEVICES names devices ("all", "0,1"), an
   * engine over those devices (as {@link #Engine(int[])}), as tmm_create does.
   */
  public Engine() {
    this(create(0, 0, null, true));
  }

  /** An engine on a chosen backend; {@code device} is the CUDA device index. */
  public Engine(Backend backend, int device) {
    this(create(notNull(backend, "backend").nativeValue(), device, null, false));
  }

  /**
   * A CUDA engine over several devices (since 1.2): its host-array calls (sgemm, dgemm and
   * their batched forms) share each large product's tiles between the devices, each taking
   * the next as it finishes the last. {@code null} or an empty array: every device; a
   * device may be listed twice. Buffer calls on device memory and streams do not exist in
   * the bindings; see tmm_create_with_devices in tiledmm.h for the rest. No usable device, or
   * an index that does not exist: TiledmmException(NO_DEVICE); more than 64:
   * TiledmmException(INVALID_VALUE).
   */
  public Engine(int[] devices) {
    this(create(0, 0, devices == null ? new int[0] : devices.clone(), false));
  }

  private Engine(SWIGTYPE_p_tmm_context_s created) {
    handle = created;
    CREATED.incrementAndGet();
    cleanable = CLEANER.register(this, new Release(handle));
  }

  // The native handle: tmm_create (byDefault), tmm_create_with_backend, or
  // tmm_create_with_devices for a list.
  private static SWIGTYPE_p_tmm_context_s create(
      int backend, int device, int[] devices, boolean byDefault) {
    if (devices != null && devices.length > 64) {
      throw error(Status.INVALID_VALUE.nativeValue(),
          "count must be 0 to 64 (got " + devices.length + ")");
    }
    SWIGTYPE_p_p_tmm_context_s cell = TiledmmNative.new_tmmb_handle_cell();
    SWIGTYPE_p_int list =
        devices == null ? null : TiledmmNative.new_tmmb_int_array(Math.max(1, devices.length));
    try {
      int status;
      if (byDefault) {
        status = TiledmmNative.tmm_create(cell);
      } else if (devices == null) {
        status = TiledmmNative.tmm_create_with_backend(cell, backend, device);
      } else {
        for (int i = 0; i < devices.length; ++i) {
          TiledmmNative.tmmb_int_array_setitem(list, i, devices[i]);
        }
        status = TiledmmNative.tmm_create_with_devices(
            cell, devices.length == 0 ? null : list, devices.length);
      }
      if (status != 0) throw error(status, TiledmmNative.tmm_get_error_message(null));
      return TiledmmNative.tmmb_handle_cell_value(cell);
    } finally {
      TiledmmNative.delete_tmmb_handle_cell(cell);
      if (list != null) TiledmmNative.delete_tmmb_int_array(list);
    }
  }

  /** The version of the loaded native library, as MAJOR*10000 + MINOR*100 + PATCH. */
  public static int getVersion() {
    return TiledmmNative.tmm_version();
  }

  /** The version these bindings were built against. */
  public static int getBindingVersion() {
    return TiledmmNativeConstants.TILEDMM_VERSION;
  }

  /** Releases the native handle; calling it again does nothing. */
  @Override
  public final synchronized void close() {
    if (handle == null) return;
    handle = null;
    cleanable.clean();
  }

  /** The backend the engine runs on: CUDA or CPU, never AUTO. */
  public final synchronized Backend getBackend() {
    return Backend.of(getInt(TiledmmNative::tmmb_get_backend));
  }

  public final synchronized void setAlgorithm(Algorithm algorithm) {
    check(TiledmmNative.tmm_set_algorithm(live(), notNull(algorithm, "algorithm").nativeValue()));
  }

  public final synchronized Algorithm getAlgorithm() {
    return Algorithm.of(getInt(TiledmmNative::tmmb_get_algorithm));
  }

  /** Tile edge: 8, 16, 32 (naive, tiled, coarsened) or 16, 32, 64, 128, 256 (blocked: 16 thin, 32 small batches); 0 = default. */
  public final synchronized void setTileSize(int tileSize) {
    check(TiledmmNative.tmm_set_tile_size(live(), tileSize));
  }

  public final synchronized int getTileSize() {
    return getInt(TiledmmNative::tmm_get_tile_size);
  }

  /** Outputs per thread of the coarsened kernel: 1, 2 or 4; 0 = default. */
  public final synchronized void setCoarsening(int coarsening) {
    check(TiledmmNative.tmm_set_coarsening(live(), coarsening));
  }

  public final synchronized int getCoarsening() {
    return getInt(TiledmmNative::tmm_get_coarsening);
  }

  /**
   * Sets an option: {@code mm.setOption(Option.HOST_THREADS, 4)}. A value outside the
   * option's bounds ({@link #getOptionBounds}), or not among the values it takes, raises
   * TiledmmException(INVALID_VALUE); a valid value the backend lacks raises
   * NOT_SUPPORTED. Either way the setting is unchanged. {@link Option#ALGORITHM} takes
   * an algorithm's C value; {@link #setAlgorithm} is the typed form.
   */
  public final synchronized void setOption(Option option, long value) {
    check(TiledmmNative.tmm_set_option(live(), notNull(option, "option").nativeValue(), value));
  }

  /** The value of an option on this engine. */
  public final synchronized long getOption(Option option) {
    int id = notNull(option, "option").nativeValue();
    SWIGTYPE_p_long_long cell = TiledmmNative.new_tmmb_int64_cell();
    try {
      check(TiledmmNative.tmm_get_option(live(), id, cell));
      return TiledmmNative.tmmb_int64_cell_value(cell);
    } finally {
      TiledmmNative.delete_tmmb_int64_cell(cell);
    }
  }

  /**
   * The smallest and largest value an option takes, and its default, in the loaded
   * library. An option that library does not know (it is older than these bindings)
   * raises TiledmmException(INVALID_VALUE).
   */
  public static OptionBounds getOptionBounds(Option option) {
    int id = notNull(option, "option").nativeValue();
    SWIGTYPE_p_long_long lower = TiledmmNative.new_tmmb_int64_cell();
    SWIGTYPE_p_long_long upper = TiledmmNative.new_tmmb_int64_cell();
    SWIGTYPE_p_long_long byDefault = TiledmmNative.new_tmmb_int64_cell();
    try {
      int status = TiledmmNative.tmm_get_option_bounds(id, lower, upper, byDefault);
      if (status != 0) throw error(status, TiledmmNative.tmm_get_error_message(null));
      return new OptionBounds(option, TiledmmNative.tmmb_int64_cell_value(lower),
          TiledmmNative.tmmb_int64_cell_value(upper),
          TiledmmNative.tmmb_int64_cell_value(byDefault));
    } finally {
      TiledmmNative.delete_tmmb_int64_cell(lower);
      TiledmmNative.delete_tmmb_int64_cell(upper);
      TiledmmNative.delete_tmmb_int64_cell(byDefault);
    }
  }

  /**
   * The library's name of an option ("host_threads"). An option the loaded library does
   * not know raises TiledmmException(INVALID_VALUE).
   */
  public static String getOptionName(Option option) {
    String name = TiledmmNative.tmm_option_name(notNull(option, "option").nativeValue());
    if (name == null) {
      throw error(Status.INVALID_VALUE.value, "the loaded library (version " + getVersion()
          + ") does not know option " + option + " (" + option.value + ")");
    }
    return name;
  }

  /**
   * Every kernel of the loaded library, CPU kernels first, each with the settings that
   * select it. The list is read once and cannot be modified.
   */
  public static List<KernelInfo> getKernels() {
    List<KernelInfo> all = kernels;
    if (all == null) {
      all = readKernels();
      kernels = all;  // a race reads the same table twice: harmless
    }
    return all;
  }

  private static List<KernelInfo> readKernels() {
    List<KernelInfo> all = new ArrayList<>();
    tmm_kernel_info info = new tmm_kernel_info();
    try {
      for (int index = 0; ; index++) {
        int status = TiledmmNative.tmmb_get_kernel_info(index, info);
        // INVALID_VALUE past the last kernel; at index 0 (there are always CPU kernels)
        // it is a real error, and its message says which.
        if (status == Status.INVALID_VALUE.value && index > 0) break;
        if (status != 0) throw error(status, TiledmmNative.tmm_get_error_message(null));
        all.add(new KernelInfo(info));
      }
    } finally {
      info.delete();
    }
    return Collections.unmodifiableList(all);
  }

  /**
   * C = alpha * op(A) * op(B) + beta * C, with op(A) m x k, op(B) k x n and C m x n,
   * each matrix starting at its offset in its array. BLAS semantics; beta = 0 never
   * reads C. Returns when c holds the result.
   *
   * <p>The library copies the arrays in pieces (on a GPU, its packing threads copy them
   * straight into its pinned staging while the GPU works, so the copies overlap the
   * product) and writes back only the m x n part of C; elements of c outside it are
   * never written. No array is pinned while the product runs, so the garbage collector
   * is never held up. Direct FloatBuffers avoid the copies.
   */
  public final synchronized void sgemm(Layout layout, Transpose transA, Transpose transB,
      long m, long n, long k, float alpha, float[] a, int offsetA, long lda, float[] b,
      int offsetB, long ldb, float beta, float[] c, int offsetC, long ldc) {
    Shapes.check(layout, transA, transB, m, n, k, alpha, length(a), offsetA, lda, length(b),
        offsetB, ldb, length(c), offsetC, ldc);
    checkArrays(Element.FLOAT, TiledmmNative.tmmb_sgemm_arrays(live(), layout.nativeValue(),
        transA.nativeValue(), transB.nativeValue(), m, n, k, alpha, a, offsetA, lda, b, offsetB,
        ldb, beta, c, offsetC, ldc));
  }

  /** {@link #sgemm(Layout, Transpose, Transpose, long, long, long, float, float[], int, long,
   * float[], int, long, float, float[], int, long)} with every offset 0. */
  public final void sgemm(Layout layout, Transpose transA, Transpose transB, long m, long n,
      long k, float alpha, float[] a, long lda, float[] b, long ldb, float beta, float[] c,
      long ldc) {
    sgemm(layout, transA, transB, m, n, k, alpha, a, 0, lda, b, 0, ldb, beta, c, 0, ldc);
  }

  /**
   * The same on direct FloatBuffers in native byte order, each matrix starting at its
   * buffer's position (positions are not changed); the library works on them in place.
   * Make them with {@code ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder())
   * .asFloatBuffer()}. Heap buffers and buffers in the other byte order (the default of
   * {@code ByteBuffer}) are rejected, and so is a read-only C.
   */
  public final synchronized void sgemm(Layout layout, Transpose transA, Transpose transB,
      long m, long n, long k, float alpha, FloatBuffer a, long lda, FloatBuffer b, long ldb,
      float beta, FloatBuffer c, long ldc) {
    checkBuffers(Element.FLOAT, a, order(a), b, order(b), c, order(c));
    Shapes.check(layout, transA, transB, m, n, k, alpha, limit(a), position(a), lda, limit(b),
        position(b), ldb, limit(c), position(c), ldc);
    check(TiledmmNative.tmmb_sgemm_direct(live(), layout.nativeValue(), transA.nativeValue(),
        transB.nativeValue(), m, n, k, alpha, a, position(a), lda, b, position(b), ldb, beta, c,
        position(c), ldc));
  }

  /**
   * {@link #sgemm(Layout, Transpose, Transpose, long, long, long, float, float[], int, long,
   * float[], int, long, float, float[], int, long) sgemm} in double precision: C = alpha *
   * op(A) * op(B) + beta * C on double[] arrays, each matrix starting at its offset, with
   * every product and sum in FP64. The same arguments, checks, exceptions and copies
   * (leading dimensions and offsets count doubles); the report of the call says
   * {@link Precision#DOUBLE}. Direct DoubleBuffers avoid the copies.
   */
  public final synchronized void dgemm(Layout layout, Transpose transA, Transpose transB,
      long m, long n, long k, double alpha, double[] a, int offsetA, long lda, double[] b,
      int offsetB, long ldb, double beta, double[] c, int offsetC, long ldc) {
    Shapes.check(layout, transA, transB, m, n, k, alpha, length(a), offsetA, lda, length(b),
        offsetB, ldb, length(c), offsetC, ldc);
    checkArrays(Element.DOUBLE, TiledmmNative.tmmb_dgemm_arrays(live(), layout.nativeValue(),
        transA.nativeValue(), transB.nativeValue(), m, n, k, alpha, a, offsetA, lda, b, offsetB,
        ldb, beta, c, offsetC, ldc));
  }

  /** {@link #dgemm(Layout, Transpose, Transpose, long, long, long, double, double[], int,
   * long, double[], int, long, double, double[], int, long)} with every offset 0. */
  public final void dgemm(Layout layout, Transpose transA, Transpose transB, long m, long n,
      long k, double alpha, double[] a, long lda, double[] b, long ldb, double beta, double[] c,
      long ldc) {
    dgemm(layout, transA, transB, m, n, k, alpha, a, 0, lda, b, 0, ldb, beta, c, 0, ldc);
  }

  /**
   * dgemm on direct DoubleBuffers in native byte order, each matrix starting at its
   * buffer's position (positions are not changed); the library works on them in place.
   * Make them with {@code ByteBuffer.allocateDirect(8 * n).order(ByteOrder.nativeOrder())
   * .asDoubleBuffer()}. Heap buffers and buffers in the other byte order (the default of
   * {@code ByteBuffer}) are rejected, and so is a read-only C.
   */
  public final synchronized void dgemm(Layout layout, Transpose transA, Transpose transB,
      long m, long n, long k, double alpha, DoubleBuffer a, long lda, DoubleBuffer b, long ldb,
      double beta, DoubleBuffer c, long ldc) {
    checkBuffers(Element.DOUBLE, a, order(a), b, order(b), c, order(c));
    Shapes.check(layout, transA, transB, m, n, k, alpha, limit(a), position(a), lda, limit(b),
        position(b), ldb, limit(c), position(c), ldc);
    check(TiledmmNative.tmmb_dgemm_direct(live(), layout.nativeValue(), transA.nativeValue(),
        transB.nativeValue(), m, n, k, alpha, a, position(a), lda, b, position(b), ldb, beta, c,
        position(c), ldc));
  }

  /**
   * A strided batch of {@code batch} products (since 1.2) on direct FloatBuffers in native
   * byte order: product i is C_i = alpha * op(A_i) * op(B_i) + beta * C_i, where X_i starts
   * {@code i * strideX} floats past the buffer's position (a stride of 0 for A or B shares
   * one matrix among every product). The direct-buffer sgemm's arguments, rules and
   * exceptions otherwise; products of C must share no element with each other or with A
   * or B. Each buffer must hold the last product's footprint. (On float[] arrays: not
   * yet.)
   */
  public final synchronized void sgemmStridedBatched(Layout layout, Transpose transA,
      Transpose transB, long m, long n, long k, float alpha, FloatBuffer a, long lda,
      long strideA, FloatBuffer b, long ldb, long strideB, float beta, FloatBuffer c, long ldc,
      long strideC, long batch) {
    checkBuffers(Element.FLOAT, a, order(a), b, order(b), c, order(c));
    Shapes.checkBatched(layout, transA, transB, m, n, k, alpha, limit(a), position(a), lda,
        strideA, limit(b), position(b), ldb, strideB, limit(c), position(c), ldc, strideC, batch);
    check(TiledmmNative.tmmb_sgemm_strided_batched_direct(live(), layout.nativeValue(),
        transA.nativeValue(), transB.nativeValue(), m, n, k, alpha, a, position(a), lda, strideA,
        b, position(b), ldb, strideB, beta, c, position(c), ldc, strideC, batch));
  }

  /** sgemmStridedBatched in double precision, on direct DoubleBuffers (strides count doubles). */
  public final synchronized void dgemmStridedBatched(Layout layout, Transpose transA,
      Transpose transB, long m, long n, long k, double alpha, DoubleBuffer a, long lda,
      long strideA, DoubleBuffer b, long ldb, long strideB, double beta, DoubleBuffer c, long ldc,
      long strideC, long batch) {
    checkBuffers(Element.DOUBLE, a, order(a), b, order(b), c, order(c));
    Shapes.checkBatched(layout, transA, transB, m, n, k, alpha, limit(a), position(a), lda,
        strideA, limit(b), position(b), ldb, strideB, limit(c), position(c), ldc, strideC, batch);
    check(TiledmmNative.tmmb_dgemm_strided_batched_direct(live(), layout.nativeValue(),
        transA.nativeValue(), transB.nativeValue(), m, n, k, alpha, a, position(a), lda, strideA,
        b, position(b), ldb, strideB, beta, c, position(c), ldc, strideC, batch));
  }

  /** Compute time of the last successful sgemm or dgemm, in milliseconds. */
  public final synchronized double getLastTime() {
    SWIGTYPE_p_double cell = TiledmmNative.new_tmmb_double_cell();
    try {
      check(TiledmmNative.tmm_get_last_time(live(), cell));
      return TiledmmNative.tmmb_double_cell_value(cell);
    } finally {
      TiledmmNative.delete_tmmb_double_cell(cell);
    }
  }

  /**
   * The report of the last successful sgemm or dgemm: times, backend and device, the
   * algorithm, math mode, tile and split-K that ran, host threads, the kernel's name and
   * the precision (SINGLE or DOUBLE).
   */
  public final synchronized Report getLastReport() {
    tmm_report r = new tmm_report();
    try {
      check(TiledmmNative.tmmb_get_last_report(live(), r));
      return new Report(r);
    } finally {
      r.delete();
    }
  }

  /** Upload, compute, download and total time of the last successful sgemm or dgemm. */
  public final synchronized Timing getLastTiming() {
    tmm_timing t = new tmm_timing();
    try {
      check(TiledmmNative.tmm_get_last_timing(live(), t));
      return new Timing(t.getUpload_ms(), t.getCompute_ms(), t.getDownload_ms(), t.getTotal_ms(),
          Algorithm.of(t.getAlgorithm()), t.getTile_size(), t.getCoarsening());
    } finally {
      t.delete();
    }
  }

  /**
   * The devices the engine computes on (since 1.2): as many as an engine over several
   * devices lists, 1 for one device; a CPU engine raises TiledmmException(NOT_SUPPORTED).
   */
  public final synchronized int getDeviceCount() {
    return getInt(TiledmmNative::tmm_get_device_count);
  }

  /**
   * Entry {@code index} (0 to getDeviceCount() - 1) of the engine's devices (since 1.2);
   * another index raises TiledmmException(INVALID_VALUE), a CPU engine NOT_SUPPORTED.
   */
  public final synchronized DeviceInfo getDeviceInfo(int index) {
    tmm_device_info d = new tmm_device_info();
    try {
      check(TiledmmNative.tmm_get_device_info_at(live(), index, d));
      return new DeviceInfo(d);
    } finally {
      d.delete();
    }
  }

  /**
   * What entry {@code index} of the engine's devices did in the last successful call
   * (since 1.2); no call yet or another index: TiledmmException(INVALID_VALUE); a CPU
   * engine NOT_SUPPORTED.
   */
  public final synchronized DeviceReport getDeviceReport(int index) {
    tmm_device_report r = new tmm_device_report();
    try {
      check(TiledmmNative.tmmb_get_last_device_report(live(), index, r));
      return new DeviceReport(r);
    } finally {
      r.delete();
    }
  }

  /**
   * The engine's GPU (the first of several); a CPU engine raises
   * TiledmmException(NOT_SUPPORTED).
   */
  public final synchronized DeviceInfo getDeviceInfo() {
    tmm_device_info d = new tmm_device_info();
    try {
      check(TiledmmNative.tmm_get_device_info(live(), d));
      return new DeviceInfo(d);
    } finally {
      d.delete();
    }
  }

  /**
   * Allocates now the pinned host staging of the streamed host path
   * ({@link HostPath#STREAMED}), so that the first large sgemm or dgemm does not pay for it
   * (pinning host memory takes tens of milliseconds per GiB): {@code
   * mm.reserveHostStaging(0)}. {@code bytes} is 0 for the engine's staging budget
   * ({@link Option#HOST_STAGING_BYTES}, default 512 MiB) or at most that budget; more
   * raises TiledmmException(INVALID_VALUE), and memory that cannot be had raises
   * OUT_OF_MEMORY (the engine works on). The staging belongs to the device and is
   * shared by every engine of the process on it. A CPU engine has no staging: a no-op.
   * A negative {@code bytes} raises IllegalArgumentException before any native code runs.
   */
  public final synchronized void reserveHostStaging(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("bytes must not be negative (got " + bytes + ")");
    }
    check(TiledmmNative.tmm_reserve_host_staging(live(), bytes));
  }

  /** Waits for all work the engine queued. */
  public final synchronized void synchronize() {
    check(TiledmmNative.tmm_synchronize(live()));
  }

  /** Native handles created so far by this class loader's engines (for the tests). */
  static long nativeHandlesCreated() {
    return CREATED.get();
  }

  /** Native handles destroyed so far, by close() or by the garbage collector. */
  static long nativeHandlesDestroyed() {
    return DESTROYED.get();
  }

  /** A C getter that writes one int through an out-parameter. */
  private interface IntGetter {
    int get(SWIGTYPE_p_tmm_context_s handle, SWIGTYPE_p_int out);
  }

  private int getInt(IntGetter getter) {
    SWIGTYPE_p_int cell = TiledmmNative.new_tmmb_int_cell();
    try {
      check(getter.get(live(), cell));
      return TiledmmNative.tmmb_int_cell_value(cell);
    } finally {
      TiledmmNative.delete_tmmb_int_cell(cell);
    }
  }

  private SWIGTYPE_p_tmm_context_s live() {
    if (handle == null) throw new IllegalStateException("this Engine is closed");
    return handle;
  }

  private void check(int status) {
    if (status != 0) throw error(status, TiledmmNative.tmm_get_error_message(handle));
  }

  /** The exception of a failed call (package-private for the tests). */
  static TiledmmException error(int status, String detail) {
    Status s = Status.of(status);
    String text = TiledmmNative.tmm_status_string(status);
    return new TiledmmException(s, detail == null || detail.isEmpty() ? text : text + ": " + detail);
  }

  /** Enum (and other) arguments are checked in Java, before native code runs. */
  private static <T> T notNull(T value, String name) {
    if (value == null) throw new IllegalArgumentException(name + " must not be null");
    return value;
  }

  /** The element type of a product, as the messages of the argument checks name it. */
  private enum Element {
    FLOAT("float", "FloatBuffer", "asFloatBuffer"),
    DOUBLE("double", "DoubleBuffer", "asDoubleBuffer");

    final String name;
    final String buffer;
    final String view;

    Element(String name, String buffer, String view) {
      this.name = name;
      this.buffer = buffer;
      this.view = view;
    }
  }

  /** The status of a tmmb_*gemm_arrays call: its own TMMB_NO_MEMORY, or the library's. */
  private void checkArrays(Element element, int status) {
    if (status == TiledmmNativeConstants.TMMB_NO_MEMORY) {
      throw new TiledmmException(Status.OUT_OF_MEMORY,
          TiledmmNative.tmm_status_string(Status.OUT_OF_MEMORY.value)
              + ": the JVM has no memory for a reference to the " + element.name + "[] arrays");
    }
    check(status);
  }

  /**
   * The checks of the buffer forms: the library reads (and writes C) in the machine's
   * byte order, straight from the buffers. Each buffer comes with its order (null for a
   * null buffer: the shape checks say whether the call needs it).
   */
  private static void checkBuffers(Element element, Buffer a, ByteOrder orderA, Buffer b,
      ByteOrder orderB, Buffer c, ByteOrder orderC) {
    checkBuffer(element, "A", a, orderA);
    checkBuffer(element, "B", b, orderB);
    checkBuffer(element, "C", c, orderC);
    if (c != null && c.isReadOnly()) throw new IllegalArgumentException("C is read-only");
  }

  private static void checkBuffer(Element element, String name, Buffer buf, ByteOrder order) {
    if (buf == null) return;
    if (!buf.isDirect()) {
      throw new IllegalArgumentException(name + ": " + element.buffer + " must be direct"
          + " (ByteBuffer.allocateDirect); for heap data use the " + element.name + "[] form");
    }
    if (order != ByteOrder.nativeOrder()) {
      throw new IllegalArgumentException(name + ": " + element.buffer + " is " + order
          + " but the library reads " + ByteOrder.nativeOrder() + " " + element.name
          + "s: make it with ByteBuffer.allocateDirect(...).order(ByteOrder.nativeOrder())."
          + element.view + "()");
    }
  }

  private static ByteOrder order(FloatBuffer buf) {
    return buf == null ? null : buf.order();
  }

  private static ByteOrder order(DoubleBuffer buf) {
    return buf == null ? null : buf.order();
  }

  private static long length(float[] array) {
    return array == null ? -1 : array.length;
  }

  private static long length(double[] array) {
    return array == null ? -1 : array.length;
  }

  private static long limit(Buffer buf) {
    return buf == null ? -1 : buf.limit();
  }

  private static int position(Buffer buf) {
    return buf == null ? 0 : buf.position();
  }
}
