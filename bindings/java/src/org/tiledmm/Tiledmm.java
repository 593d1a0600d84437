package org.tiledmm;

import java.lang.ref.Cleaner;
import java.nio.FloatBuffer;

/**
 * A tiledmm handle: single-precision matrix multiplication on a CUDA GPU or the CPU.
 *
 * <pre>{@code
 * try (Tiledmm mm = new Tiledmm()) {
 *   mm.sgemm(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, m, n, k,
 *            1f, a, k, b, n, 0f, c, n);          // c = a * b
 *   System.out.println(mm.lastTime() + " ms");
 * }
 * }</pre>
 *
 * <p>Errors raise {@link TiledmmException} with the library's status and message. Arrays
 * that are too short, negative offsets and null arrays that the call needs raise
 * {@link IllegalArgumentException} before any native code runs. A closed handle raises
 * {@link IllegalStateException}. Methods are thread-safe; calls on one handle are
 * serialised. A handle left to the garbage collector is released by it.
 */
public final class Tiledmm implements AutoCloseable {
  private static final Cleaner CLEANER = Cleaner.create();

  static {
    NativeLoader.load();
  }

  /** Owns the native handle; run once, by close() or by the garbage collector. */
  private static final class Release implements Runnable {
    private SWIGTYPE_p_tmm_context_s handle;

    Release(SWIGTYPE_p_tmm_context_s handle) {
      this.handle = handle;
    }

    @Override
    public synchronized void run() {
      if (handle != null) TiledmmNative.tmm_destroy(handle);
      handle = null;
    }
  }

  private SWIGTYPE_p_tmm_context_s handle;
  private final Cleaner.Cleanable cleanable;

  /** A handle on the best backend: CUDA device 0 if usable, else the CPU. */
  public Tiledmm() {
    this(Backend.AUTO, 0);
  }

  /** A handle on a chosen backend; {@code device} is the CUDA device index. */
  public Tiledmm(Backend backend, int device) {
    SWIGTYPE_p_p_tmm_context_s cell = TiledmmNative.new_tmmb_handle_cell();
    try {
      int status = TiledmmNative.tmm_create_with_backend(cell, backend.value, device);
      if (status != 0) throw error(status, TiledmmNative.tmm_get_error_message(null));
      handle = TiledmmNative.tmmb_handle_cell_value(cell);
    } finally {
      TiledmmNative.delete_tmmb_handle_cell(cell);
    }
    cleanable = CLEANER.register(this, new Release(handle));
  }

  /** The version of the loaded native library, as MAJOR*10000 + MINOR*100 + PATCH. */
  public static int version() {
    return TiledmmNative.tmm_version();
  }

  /** The version these bindings were built against. */
  public static int bindingVersion() {
    return TiledmmNativeConstants.TILEDMM_VERSION;
  }

  /** Releases the native handle; calling it again does nothing. */
  @Override
  public synchronized void close() {
    if (handle == null) return;
    handle = null;
    cleanable.clean();
  }

  public synchronized Backend backend() {
    return Backend.of(getInt(TiledmmNative::tmmb_get_backend));
  }

  public synchronized void setAlgorithm(Algorithm algorithm) {
    check(TiledmmNative.tmm_set_algorithm(live(), algorithm.value));
  }

  public synchronized Algorithm getAlgorithm() {
    return Algorithm.of(getInt(TiledmmNative::tmmb_get_algorithm));
  }

  /** Tile edge: 8, 16, 32 (naive, tiled, coarsened) or 64, 128, 256 (blocked); 0 = default. */
  public synchronized void setTileSize(int tileSize) {
    check(TiledmmNative.tmm_set_tile_size(live(), tileSize));
  }

  public synchronized int getTileSize() {
    return getInt(TiledmmNative::tmm_get_tile_size);
  }

  /** Outputs per thread of the coarsened kernel: 1, 2 or 4; 0 = default. */
  public synchronized void setCoarsening(int coarsening) {
    check(TiledmmNative.tmm_set_coarsening(live(), coarsening));
  }

  public synchronized int getCoarsening() {
    return getInt(TiledmmNative::tmm_get_coarsening);
  }

  /**
   * C = alpha * op(A) * op(B) + beta * C, with op(A) m x k, op(B) k x n and C m x n,
   * each matrix starting at its offset in its array. BLAS semantics; beta = 0 never
   * reads C. Returns when c holds the result.
   */
  public synchronized void sgemm(Layout layout, Transpose transA, Transpose transB, long m,
      long n, long k, float alpha, float[] a, int offsetA, long lda, float[] b, int offsetB,
      long ldb, float beta, float[] c, int offsetC, long ldc) {
    Shapes.check(layout, transA, transB, m, n, k, alpha, length(a), offsetA, lda, length(b),
        offsetB, ldb, length(c), offsetC, ldc);
    check(TiledmmNative.tmmb_sgemm(live(), layout.value, transA.value, transB.value, m, n, k,
        alpha, a, offsetA, lda, b, offsetB, ldb, beta, c, offsetC, ldc));
  }

  /** {@link #sgemm(Layout, Transpose, Transpose, long, long, long, float, float[], int, long,
   * float[], int, long, float, float[], int, long)} with every offset 0. */
  public void sgemm(Layout layout, Transpose transA, Transpose transB, long m, long n, long k,
      float alpha, float[] a, long lda, float[] b, long ldb, float beta, float[] c, long ldc) {
    sgemm(layout, transA, transB, m, n, k, alpha, a, 0, lda, b, 0, ldb, beta, c, 0, ldc);
  }

  /**
   * The same on direct FloatBuffers, each matrix starting at its buffer's position
   * (positions are not changed). Heap buffers are rejected: use the float[] form.
   */
  public synchronized void sgemm(Layout layout, Transpose transA, Transpose transB, long m,
      long n, long k, float alpha, FloatBuffer a, long lda, FloatBuffer b, long ldb, float beta,
      FloatBuffer c, long ldc) {
    for (FloatBuffer buf : new FloatBuffer[] {a, b, c}) {
      if (buf != null && !buf.isDirect()) {
        throw new IllegalArgumentException("FloatBuffer must be direct (allocateDirect)");
      }
    }
    if (c != null && c.isReadOnly()) throw new IllegalArgumentException("C is read-only");
    Shapes.check(layout, transA, transB, m, n, k, alpha, limit(a), position(a), lda, limit(b),
        position(b), ldb, limit(c), position(c), ldc);
    check(TiledmmNative.tmmb_sgemm_direct(live(), layout.value, transA.value, transB.value, m,
        n, k, alpha, a, position(a), lda, b, position(b), ldb, beta, c, position(c), ldc));
  }

  /** Compute time of the last successful sgemm, in milliseconds. */
  public synchronized double lastTime() {
    SWIGTYPE_p_double cell = TiledmmNative.new_tmmb_double_cell();
    try {
      check(TiledmmNative.tmm_get_last_time(live(), cell));
      return TiledmmNative.tmmb_double_cell_value(cell);
    } finally {
      TiledmmNative.delete_tmmb_double_cell(cell);
    }
  }

  /** Upload, compute, download and total time of the last successful sgemm. */
  public synchronized Timing lastTiming() {
    tmm_timing t = new tmm_timing();
    try {
      check(TiledmmNative.tmm_get_last_timing(live(), t));
      return new Timing(t.getUpload_ms(), t.getCompute_ms(), t.getDownload_ms(), t.getTotal_ms(),
          Algorithm.of(t.getAlgorithm()), t.getTile_size(), t.getCoarsening());
    } finally {
      t.delete();
    }
  }

  /** The handle's GPU; a CPU handle raises TiledmmException(NOT_SUPPORTED). */
  public synchronized DeviceInfo deviceInfo() {
    tmm_device_info d = new tmm_device_info();
    try {
      check(TiledmmNative.tmm_get_device_info(live(), d));
      return new DeviceInfo(d);
    } finally {
      d.delete();
    }
  }

  /** Waits for all work the handle queued. */
  public synchronized void synchronize() {
    check(TiledmmNative.tmm_synchronize(live()));
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
    if (handle == null) throw new IllegalStateException("this Tiledmm handle is closed");
    return handle;
  }

  private void check(int status) {
    if (status != 0) throw error(status, TiledmmNative.tmm_get_error_message(handle));
  }

  private static TiledmmException error(int status, String detail) {
    Status s = Status.of(status);
    String text = TiledmmNative.tmm_status_string(status);
    return new TiledmmException(s, detail == null || detail.isEmpty() ? text : text + ": " + detail);
  }

  private static long length(float[] array) {
    return array == null ? -1 : array.length;
  }

  private static long limit(FloatBuffer buf) {
    return buf == null ? -1 : buf.limit();
  }

  private static int position(FloatBuffer buf) {
    return buf == null ? 0 : buf.position();
  }
}
