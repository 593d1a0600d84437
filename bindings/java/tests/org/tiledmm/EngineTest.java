package org.tiledmm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Java binding on the CPU backend: results, every error path, the copies of
 * float[] arrays, lifetime (close, the garbage collector), threads, and the deprecated
 * 1.0 names.
 */
class EngineTest {
  private static final Random RANDOM = new Random();

  /** A random call, its arrays (with leading-dimension padding and offsets) and a
   * double-precision reference. */
  static final class Case {
    final Layout layout;
    final Transpose ta, tb;
    final int m, n, k, offset;
    final float alpha, beta;
    final long lda, ldb, ldc;
    final float[] a, b, c, c0;

    Case(Layout layout, Transpose ta, Transpose tb, int m, int n, int k, float alpha, float beta,
        int pad, int offset) {
      this.layout = layout;
      this.ta = ta;
      this.tb = tb;
      this.m = m;
      this.n = n;
      this.k = k;
      this.alpha = alpha;
      this.beta = beta;
      this.offset = offset;
      boolean row = layout == Layout.ROW_MAJOR;
      int ar = ta == Transpose.TRANS ? k : m, ac = ta == Transpose.TRANS ? m : k;
      int br = tb == Transpose.TRANS ? n : k, bc = tb == Transpose.TRANS ? k : n;
      lda = Math.max(1, row ? ac : ar) + pad;
      ldb = Math.max(1, row ? bc : br) + pad;
      ldc = Math.max(1, row ? n : m) + pad;
      a = random(offset + (int) (Math.max(1, row ? ar : ac) * lda));
      b = random(offset + (int) (Math.max(1, row ? br : bc) * ldb));
      c = random(offset + (int) (Math.max(1, row ? m : n) * ldc));
      c0 = c.clone();
    }

    static float[] random(int size) {
      float[] x = new float[size];
      for (int i = 0; i < size; i++) x[i] = RANDOM.nextFloat() * 2 - 1;
      return x;
    }

    int at(int r, int col, long ld) {
      return offset + (int) (layout == Layout.ROW_MAJOR ? r * ld + col : col * ld + r);
    }

    double opA(int i, int q) {
      return ta == Transpose.TRANS ? a[at(q, i, lda)] : a[at(i, q, lda)];
    }

    double opB(int q, int j) {
      return tb == Transpose.TRANS ? b[at(j, q, ldb)] : b[at(q, j, ldb)];
    }

    void run(Engine mm) {
      mm.sgemm(layout, ta, tb, m, n, k, alpha, a, offset, lda, b, offset, ldb, beta, c, offset,
          ldc);
    }

    void verify() {
      double eps = Math.ulp(1.0f);
      for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) {
          double dot = 0, mag = 0;
          for (int q = 0; q < k; q++) {
            dot += opA(i, q) * opB(q, j);
            mag += Math.abs(opA(i, q) * opB(q, j));
          }
          double old = c0[at(i, j, ldc)];
          double scaled = beta == 0 ? 0 : beta * old;  // beta = 0: C is not read
          double ref = alpha * dot + scaled;
          double bound = 2 * (k + 2) * eps * (Math.abs(alpha) * mag + Math.abs(scaled)) + 1e-30;
          double got = c[at(i, j, ldc)];
          if (!(Math.abs(got - ref) <= bound)) {
            throw new AssertionError("C(" + i + "," + j + ") = " + got + ", expected " + ref);
          }
        }
      }
      // Nothing outside the m x n part (the offset, the padding between rows or
      // columns, the tail) was written.
      boolean[] inside = new boolean[c.length];
      for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) inside[at(i, j, ldc)] = true;
      }
      for (int x = 0; x < c.length; x++) {
        if (!inside[x] && Float.floatToRawIntBits(c[x]) != Float.floatToRawIntBits(c0[x])) {
          throw new AssertionError("c[" + x + "], outside the m x n part, was written");
        }
      }
    }
  }

  static List<Arguments> layoutsAndTransposes() {
    List<Arguments> out = new ArrayList<>();
    for (Layout l : Layout.values())
      for (Transpose ta : Transpose.values())
        for (Transpose tb : Transpose.values()) out.add(Arguments.of(l, ta, tb));
    return out;
  }

  @ParameterizedTest
  @MethodSource("layoutsAndTransposes")
  void matchesDoubleReference(Layout layout, Transpose ta, Transpose tb) {
    int[][] shapes = {{1, 1, 1}, {7, 13, 11}, {33, 17, 65}, {64, 64, 64}, {100, 37, 129}};
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      for (Algorithm algo : new Algorithm[] {Algorithm.AUTO, Algorithm.NAIVE}) {
        mm.setAlgorithm(algo);
        for (int[] s : shapes) {
          Case plain = new Case(layout, ta, tb, s[0], s[1], s[2], 1f, 0f, 0, 0);
          plain.run(mm);
          plain.verify();
          Case padded = new Case(layout, ta, tb, s[0], s[1], s[2], -0.5f, 1.25f, 3, 5);
          padded.run(mm);
          padded.verify();
        }
      }
    }
  }

  @Test
  void directBuffersWork() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      Case g = new Case(Layout.COL_MAJOR, Transpose.TRANS, Transpose.NO_TRANS, 20, 30, 40, 1f, 0.5f, 2, 3);
      FloatBuffer a = direct(g.a), b = direct(g.b), c = direct(g.c);
      a.position(g.offset);
      b.position(g.offset);
      c.position(g.offset);
      mm.sgemm(g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a, g.lda, b, g.ldb, g.beta, c, g.ldc);
      assertEquals(g.offset, c.position(), "positions are not moved");
      c.position(0);
      c.get(g.c);
      g.verify();
      assertThrows(IllegalArgumentException.class, () -> mm.sgemm(g.layout, g.ta, g.tb, g.m, g.n,
          g.k, 1f, FloatBuffer.wrap(g.a), g.lda, b, g.ldb, 0f, c, g.ldc), "heap buffers");
    }
  }

  static FloatBuffer direct(float[] x) {
    return direct(x, ByteOrder.nativeOrder());
  }

  static FloatBuffer direct(float[] x, ByteOrder order) {
    FloatBuffer buf = ByteBuffer.allocateDirect(4 * x.length).order(order).asFloatBuffer();
    buf.put(x).rewind();
    return buf;
  }

  @Test
  void buffersNotInNativeOrderAreRejectedBeforeNativeCode() {
    // ByteBuffer's default order is big-endian: on a little-endian machine, the buffer
    // most people write first. Its floats would reach the library byte-swapped.
    float[] x = Case.random(64);
    FloatBuffer defaultOrder = ByteBuffer.allocateDirect(4 * x.length).asFloatBuffer();
    defaultOrder.put(x).rewind();
    FloatBuffer wrong = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN
        ? direct(x, ByteOrder.LITTLE_ENDIAN) : defaultOrder;
    assertNotEquals(ByteOrder.nativeOrder(), wrong.order());
    Layout R = Layout.ROW_MAJOR;
    Transpose N = Transpose.NO_TRANS;
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      FloatBuffer good = direct(x), c = direct(new float[64]);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> mm.sgemm(R, N, N, 8, 8, 8, 1f, wrong, 8, good, 8, 0f, c, 8), "A");
      assertTrue(e.getMessage().contains(".order(ByteOrder.nativeOrder())"), e.getMessage());
      assertThrows(IllegalArgumentException.class,
          () -> mm.sgemm(R, N, N, 8, 8, 8, 1f, good, 8, wrong, 8, 0f, c, 8), "B");
      assertThrows(IllegalArgumentException.class,
          () -> mm.sgemm(R, N, N, 8, 8, 8, 1f, good, 8, good, 8, 0f, wrong, 8), "C");
      for (int i = 0; i < 64; i++) assertEquals(x[i], wrong.get(i), "C was not written");
      assertThrows(TiledmmException.class, mm::getLastTime, "no product ran");
    }
  }

  @Test
  void versionsMatch() {
    assertEquals(Engine.getBindingVersion(), Engine.getVersion());
    assertTrue(Engine.getVersion() >= 10000);
  }

  @Test
  void settingsRoundTrip() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      assertEquals(Backend.CPU, mm.getBackend());
      assertEquals(Algorithm.AUTO, mm.getAlgorithm());
      mm.setAlgorithm(Algorithm.NAIVE);
      assertEquals(Algorithm.NAIVE, mm.getAlgorithm());
      mm.setTileSize(16);
      assertEquals(16, mm.getTileSize());
      mm.setCoarsening(4);
      assertEquals(4, mm.getCoarsening());
    }
  }

  @Test
  void severalDevicesAreCheckedAndCpuEnginesHaveNone() {
    // A list too long, or an index that does not exist: exceptions, whatever the machine.
    TiledmmException e = assertThrows(TiledmmException.class, () -> new Engine(new int[65]));
    assertEquals(Status.INVALID_VALUE, e.getStatus());
    assertTrue(e.getMessage().contains("count"), e.getMessage());
    e = assertThrows(TiledmmException.class, () -> new Engine(new int[] {0, 4096}));
    assertEquals(Status.NO_DEVICE, e.getStatus());
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      e = assertThrows(TiledmmException.class, mm::getDeviceCount);
      assertEquals(Status.NOT_SUPPORTED, e.getStatus());
      e = assertThrows(TiledmmException.class, () -> mm.getDeviceInfo(0));
      assertEquals(Status.NOT_SUPPORTED, e.getStatus());
      float[] a = {2f}, b = {3f}, c = {0f};
      mm.sgemm(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, 1, 1, 1, 1f, a, 1, b, 1,
          0f, c, 1);
      e = assertThrows(TiledmmException.class, () -> mm.getDeviceReport(0));
      assertEquals(Status.NOT_SUPPORTED, e.getStatus());
      assertEquals(0, mm.getLastReport().getDeviceCount(), "the CPU computes on no device");
      assertEquals(0, mm.getLastReport().getHostBytes());
    }
    // Where CUDA works: device 0 twice is an engine of two devices, exact on integers.
    int[] list = {0, 0};
    Engine two;
    try {
      two = new Engine(list);
    } catch (TiledmmException noGpu) {
      assertEquals(Status.NO_DEVICE, noGpu.getStatus());
      return;
    }
    try (Engine mm = two) {
      list[1] = 7;  // the engine kept its own copy of the list
      assertEquals(2, mm.getDeviceCount());
      assertEquals(0, mm.getDeviceInfo(1).getDevice());
      int n = 300;
      float[] a = new float[n * n], b = new float[n * n], c = new float[n * n];
      for (int i = 0; i < n * n; ++i) {
        a[i] = (i % 5) - 2;
        b[i] = (i % 3) - 1;
      }
      mm.sgemm(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, n, n, n, 1f, a, n, b, n,
          0f, c, n);
      for (int i = 0; i < n; i += 37) {
        for (int j = 0; j < n; j += 41) {
          float want = 0;
          for (int q = 0; q < n; ++q) want += a[i * n + q] * b[q * n + j];
          assertEquals(want, c[i * n + j]);
        }
      }
      assertTrue(mm.getDeviceReport(0).getDevice() == 0);
    }
  }

  @Test
  void libraryErrorsAreExceptionsWithStatus() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      TiledmmException e = assertThrows(TiledmmException.class, () -> mm.setTileSize(7));
      assertEquals(Status.INVALID_VALUE, e.getStatus());
      assertTrue(e.getMessage().contains("tile size"), e.getMessage());
      e = assertThrows(TiledmmException.class, () -> mm.setAlgorithm(Algorithm.TILED));
      assertEquals(Status.NOT_SUPPORTED, e.getStatus());
      e = assertThrows(TiledmmException.class, mm::getDeviceInfo);
      assertEquals(Status.NOT_SUPPORTED, e.getStatus());
      e = assertThrows(TiledmmException.class, mm::getLastTime);
      assertEquals(Status.INVALID_VALUE, e.getStatus(), "no sgemm yet");
      float[] x = new float[16];
      e = assertThrows(TiledmmException.class, () -> mm.sgemm(Layout.ROW_MAJOR,
          Transpose.NO_TRANS, Transpose.NO_TRANS, -1, 2, 2, 1f, x, 2, x, 2, 0f, x, 2));
      assertEquals(Status.INVALID_VALUE, e.getStatus());
      assertTrue(e.getMessage().contains("m must be"), e.getMessage());
      e = assertThrows(TiledmmException.class, () -> mm.sgemm(Layout.ROW_MAJOR,
          Transpose.NO_TRANS, Transpose.NO_TRANS, 2, 2, 2, 1f, x, 1, x, 2, 0f, x, 2));
      assertTrue(e.getMessage().contains("lda"), e.getMessage());
      // The handle still works after errors.
      Case g = new Case(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, 5, 6, 7, 1f, 0f, 0, 0);
      g.run(mm);
      g.verify();
      assertTrue(mm.getLastTime() >= 0);
      Timing t = mm.getLastTiming();
      assertEquals(Algorithm.BLOCKED, t.getAlgorithm());
      assertTrue(t.getTotalMs() >= t.getComputeMs());
    }
  }

  @Test
  void missingCudaDeviceIsAnException() {
    TiledmmException e = assertThrows(TiledmmException.class, () -> new Engine(Backend.CUDA, 4096));
    assertEquals(Status.NO_DEVICE, e.getStatus());
  }

  @Test
  void shortArraysAreRejectedBeforeNativeCode() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      float[] a = new float[6 * 4], b = new float[4 * 5], c = new float[6 * 5];
      Layout R = Layout.ROW_MAJOR, C = Layout.COL_MAJOR;
      Transpose N = Transpose.NO_TRANS, T = Transpose.TRANS;
      assertDoesNotThrow(() -> mm.sgemm(R, N, N, 6, 5, 4, 1f, a, 4, b, 5, 0f, c, 5));
      // One element short, for each matrix, in each layout.
      assertThrows(IllegalArgumentException.class,
          () -> mm.sgemm(R, N, N, 6, 5, 4, 1f, new float[23], 4, b, 5, 0f, c, 5));
      assertThrows(IllegalArgumentException.class,
          () -> mm.sgemm(R, N, N, 6, 5, 4, 1f, a, 4, new float[19], 5, 0f, c, 5));
      assertThrows(IllegalArgumentException.class,
          () -> mm.sgemm(R, N, N, 6, 5, 4, 1f, a, 4, b, 5, 0f, new float[29], 5));
      assertThrows(IllegalArgumentException.class,
          () -> mm.sgemm(C, T, T, 6, 5, 4, 1f, a, 4, b, 5, 0f, new float[29], 6));
      // Offsets push the footprint past the end; negative offsets; null arrays.
      assertThrows(IllegalArgumentException.class,
          () -> mm.sgemm(R, N, N, 6, 5, 4, 1f, a, 1, 4, b, 0, 5, 0f, c, 0, 5));
      assertThrows(IllegalArgumentException.class,
          () -> mm.sgemm(R, N, N, 6, 5, 4, 1f, a, -1, 4, b, 0, 5, 0f, c, 0, 5));
      assertThrows(IllegalArgumentException.class,
          () -> mm.sgemm(R, N, N, 6, 5, 4, 1f, null, 4, b, 5, 0f, c, 5));
      assertThrows(IllegalArgumentException.class,
          () -> mm.sgemm(R, N, N, 6, 5, 4, 1f, a, 4, b, 5, 0f, null, 5));
      assertThrows(IllegalArgumentException.class,
          () -> mm.sgemm(null, N, N, 6, 5, 4, 1f, a, 4, b, 5, 0f, c, 5));
      // A huge leading dimension overflows the footprint: rejected, no crash.
      assertThrows(IllegalArgumentException.class,
          () -> mm.sgemm(R, N, N, 6, 5, 4, 1f, a, Long.MAX_VALUE / 2, b, 5, 0f, c, 5));
      // Null arrays that the call does not need are fine (k = 0: C = beta * C).
      assertDoesNotThrow(() -> mm.sgemm(R, N, N, 6, 5, 0, 1f, null, 1, null, 5, 0f, c, 5));
      assertArrayEquals(new float[30], c);
    }
  }

  @Test
  void closeTwiceAndUseAfterClose() {
    Engine mm = new Engine(Backend.CPU, 0);
    mm.close();
    assertDoesNotThrow(mm::close);
    assertThrows(IllegalStateException.class, mm::getLastTime);
    assertThrows(IllegalStateException.class, () -> mm.setAlgorithm(Algorithm.NAIVE));
    float[] x = new float[4];
    assertThrows(IllegalStateException.class, () -> mm.sgemm(Layout.ROW_MAJOR,
        Transpose.NO_TRANS, Transpose.NO_TRANS, 2, 2, 1, 1f, x, 1, x, 2, 0f, x, 2));
  }

  @Test
  void enginesLeftToTheGarbageCollectorAreReleased() throws InterruptedException {
    final int count = 200;
    long destroyedBefore = Engine.nativeHandlesDestroyed();
    long liveBefore = Engine.nativeHandlesCreated() - destroyedBefore;
    dropEngines(count);
    assertEquals(liveBefore + count, Engine.nativeHandlesCreated() - destroyedBefore);
    // The Cleaner runs after a collection finds the engines unreachable; poll, with a
    // deadline, until it has destroyed all of them.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (Engine.nativeHandlesDestroyed() - destroyedBefore < count
        && System.nanoTime() < deadline) {
      System.gc();
      Thread.sleep(20);
    }
    long destroyed = Engine.nativeHandlesDestroyed() - destroyedBefore;
    assertTrue(destroyed >= count, "the garbage collector released " + destroyed + " of "
        + count + " native handles");
    long live = Engine.nativeHandlesCreated() - Engine.nativeHandlesDestroyed();
    assertTrue(live <= liveBefore, live + " native handles live, " + liveBefore + " before");
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      assertEquals(Backend.CPU, mm.getBackend());
    }
  }

  /** Creates engines, uses them, and keeps no reference to any. */
  private static void dropEngines(int count) {
    float[] x = new float[16];
    for (int i = 0; i < count; i++) {
      Engine mm = new Engine(Backend.CPU, 0);
      mm.setTileSize(16);
      mm.sgemm(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, 4, 4, 4, 1f, x, 4, x,
          4, 0f, new float[16], 4);  // the float[] path runs, and the handle is released
    }
  }

  @Test
  void closeCountsEachNativeHandleOnce() {
    long destroyed = Engine.nativeHandlesDestroyed();
    Engine mm = new Engine(Backend.CPU, 0);
    mm.close();
    mm.close();
    assertEquals(destroyed + 1, Engine.nativeHandlesDestroyed());
  }

  @Test
  void handlesInThreadsAndASharedHandle() throws InterruptedException {
    AtomicInteger failures = new AtomicInteger();
    Engine shared = new Engine(Backend.CPU, 0);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 6; t++) {
      final int id = t;
      threads.add(new Thread(() -> {
        try (Engine own = new Engine(Backend.CPU, 0)) {
          for (int i = 0; i < 5; i++) {
            Case g = new Case(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.TRANS, 20 + id, 17 + i, 33, 1f, 0f, 1, 2);
            g.run(own);
            g.verify();
            Case h = new Case(Layout.COL_MAJOR, Transpose.TRANS, Transpose.NO_TRANS, 9 + i, 25 + id, 14, 2f, -1f, 0, 0);
            h.run(shared);
            h.verify();
          }
        } catch (Throwable e) {
          failures.incrementAndGet();
          e.printStackTrace();
        }
      }));
    }
    for (Thread th : threads) th.start();
    for (Thread th : threads) th.join();
    shared.close();
    assertEquals(0, failures.get());
  }

  @Test
  void rowsLongerThanOneCopyChunk() {
    // float[] arrays are copied in pieces of TMMB_COPY_CHUNK floats: rows longer than a
    // piece, with and without offsets.
    int chunk = TiledmmNativeConstants.TMMB_COPY_CHUNK;
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      Case wide = new Case(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, 3,
          chunk + 17, 2, 1f, 0.5f, 5, 3);
      wide.run(mm);
      wide.verify();
      Case tall = new Case(Layout.COL_MAJOR, Transpose.TRANS, Transpose.NO_TRANS,
          2 * chunk + 1, 2, 3, -1f, 2f, 0, 1);
      tall.run(mm);
      tall.verify();
      Case small = new Case(Layout.ROW_MAJOR, Transpose.TRANS, Transpose.TRANS, 5, 4, 3, 1f,
          1f, 2, 0);  // after the large ones
      small.run(mm);
      small.verify();
    }
  }

  @Test
  void scaleOnlyAndEmptyProducts() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      // alpha = 0 or k = 0: C = beta * C, A and B unread (and not staged).
      Case alphaZero = new Case(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.TRANS, 6, 5, 4,
          0f, 1.5f, 2, 1);
      alphaZero.run(mm);
      alphaZero.verify();
      Case kZero = new Case(Layout.COL_MAJOR, Transpose.TRANS, Transpose.NO_TRANS, 6, 5, 0, 1f,
          -2f, 1, 3);
      kZero.run(mm);
      kZero.verify();
      // m = 0 or n = 0: nothing to do, nothing written.
      for (int[] s : new int[][] {{0, 5, 4}, {6, 0, 4}}) {
        Case empty = new Case(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, s[0],
            s[1], s[2], 1f, 1f, 1, 2);
        empty.run(mm);
        empty.verify();
      }
    }
  }

  @Test
  void invalidArgumentsAreNamedByTheLibrary() {
    // The float[] path hands invalid sizes and leading dimensions to the library
    // unstaged, so that its message names the caller's argument, whichever matrix the
    // library checks first (column-major: B, then A).
    float[] x = new float[64];
    Layout R = Layout.ROW_MAJOR, C = Layout.COL_MAJOR;
    Transpose N = Transpose.NO_TRANS;
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      TiledmmException e = assertThrows(TiledmmException.class,
          () -> mm.sgemm(C, N, N, 4, 4, 4, 1f, x, 3, x, 4, 1f, x, 4));
      assertTrue(e.getMessage().contains("lda must be >= 4"), e.getMessage());
      e = assertThrows(TiledmmException.class,
          () -> mm.sgemm(R, N, N, 4, 4, 4, 1f, x, 4, x, 4, 1f, x, 3));
      assertTrue(e.getMessage().contains("ldc must be >= 4"), e.getMessage());
      e = assertThrows(TiledmmException.class,
          () -> mm.sgemm(R, N, N, 4, -4, 4, 1f, x, 4, x, 4, 1f, x, 4));
      assertTrue(e.getMessage().contains("n must be >= 0"), e.getMessage());
      assertEquals(Status.INVALID_VALUE, e.getStatus());
    }
  }

  @Test
  void betaZeroIgnoresNaNInC() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      Case g = new Case(Layout.COL_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, 9, 7, 5, 1f,
          0f, 2, 1);
      Arrays.fill(g.c, Float.NaN);
      System.arraycopy(g.c, 0, g.c0, 0, g.c.length);
      g.run(mm);
      g.verify();  // no NaN in the m x n part; the NaN around it untouched
    }
  }

  /**
   * float[] arrays are copied in pieces by the library, not held with
   * GetPrimitiveArrayCritical for the whole product: a garbage collection requested while
   * a long product runs in another thread happens while it runs (under a critical
   * section the JVM skips or defers it until the product ends), and C's padding, written
   * by this thread meanwhile, is not overwritten when the product copies C back.
   */
  @Test
  void arraysAreNotHeldWhileTheProductRuns() throws Exception {
    final int size = 1000;  // the naive CPU loop: about a second, far longer than a GC
    final int ldc = size + 1;  // one column of padding in each row of C
    float[] a = new float[size * size], b = Case.random(size * size), c = new float[size * ldc];
    Arrays.fill(a, 1f);  // so that C(i, j) = the sum of column j of B
    Arrays.fill(c, -7f);
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      mm.setAlgorithm(Algorithm.NAIVE);
      CountDownLatch starting = new CountDownLatch(1);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread worker = new Thread(() -> {
        try {
          starting.countDown();
          mm.sgemm(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, size, size, size,
              1f, a, size, b, size, 0f, c, ldc);
        } catch (Throwable e) {
          failure.set(e);
        }
      });
      worker.start();
      starting.await();
      Thread.sleep(100);  // let the worker get past the copies, into the product
      long before = collections();
      System.gc();
      long collected = collections() - before;
      boolean workerStillRunning = worker.isAlive();
      for (int i = 0; i < size; i++) c[i * ldc + size] = 42f;
      worker.join();
      if (failure.get() != null) throw new AssertionError(failure.get());
      assertTrue(workerStillRunning, "the product outlasts the collection (make it longer)");
      assertTrue(collected > 0, "System.gc() did not collect while the product ran");
      for (int j = 0; j < size; j++) {
        double sum = 0, mag = 0;
        for (int q = 0; q < size; q++) {
          sum += b[q * size + j];
          mag += Math.abs(b[q * size + j]);
        }
        for (int i = 0; i < size; i++) {
          float got = c[i * ldc + j];
          assertTrue(Math.abs(got - sum) <= 2 * size * Math.ulp(1f) * mag,
              "C(" + i + "," + j + ") = " + got + ", expected " + sum);
        }
      }
      for (int i = 0; i < size; i++) {
        assertEquals(42f, c[i * ldc + size], "padding of row " + i + " was written back");
      }
    }
  }

  private static long collections() {
    long total = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      total += Math.max(0, gc.getCollectionCount());
    }
    return total;
  }

  /** Every 1.0 name still works, as a deprecated alias of its new name. */
  @Test
  @SuppressWarnings("deprecation")
  void deprecatedNamesStillWork() {
    assertEquals(Engine.getVersion(), Tiledmm.version());
    assertEquals(Engine.getBindingVersion(), Tiledmm.bindingVersion());
    try (Tiledmm auto = new Tiledmm()) {
      assertNotEquals(Backend.AUTO, auto.backend());
    }
    try (Tiledmm mm = new Tiledmm(Backend.CPU, 0)) {
      Engine asEngine = mm;
      assertEquals(Backend.CPU, mm.backend());
      assertEquals(mm.getBackend(), asEngine.getBackend());
      TiledmmException e = assertThrows(TiledmmException.class, mm::lastTime);
      assertEquals(Status.INVALID_VALUE, e.status());
      assertEquals(e.getStatus(), e.status());
      e = assertThrows(TiledmmException.class, mm::deviceInfo);
      assertEquals(Status.NOT_SUPPORTED, e.status());
      Case g = new Case(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, 5, 6, 7, 1f,
          0f, 0, 0);
      g.run(mm);
      g.verify();
      assertTrue(mm.lastTime() >= 0);
      Timing t = mm.lastTiming();
      assertEquals(Algorithm.BLOCKED, t.algorithm);
      assertEquals(t.getAlgorithm(), t.algorithm);
      assertEquals(t.getUploadMs(), t.uploadMs);
      assertEquals(t.getComputeMs(), t.computeMs);
      assertEquals(t.getDownloadMs(), t.downloadMs);
      assertEquals(t.getTotalMs(), t.totalMs);
      assertEquals(t.getTileSize(), t.tileSize);
      assertEquals(t.getCoarsening(), t.coarsening);
    }
    // No GPU here: a DeviceInfo from an empty record, to read the 1.0 fields.
    tmm_device_info record = new tmm_device_info();
    try {
      DeviceInfo d = new DeviceInfo(record);
      assertEquals(d.getName(), d.name);
      assertEquals(d.getDevice(), d.device);
      assertEquals(d.getComputeCapabilityMajor(), d.computeCapabilityMajor);
      assertEquals(d.getComputeCapabilityMinor(), d.computeCapabilityMinor);
      assertEquals(d.getMultiprocessors(), d.multiprocessors);
      assertEquals(d.getGlobalMemoryBytes(), d.globalMemoryBytes);
      assertEquals(d.getSharedMemoryPerBlockBytes(), d.sharedMemoryPerBlockBytes);
      assertEquals(d.getSharedMemoryPerMultiprocessorBytes(),
          d.sharedMemoryPerMultiprocessorBytes);
      assertEquals(d.getL2CacheBytes(), d.l2CacheBytes);
    } finally {
      record.delete();
    }
  }

  @Test
  void autoBackendIsCudaOrCpu() {
    try (Engine mm = new Engine()) {
      assertNotEquals(Backend.AUTO, mm.getBackend());
    }
  }
}
