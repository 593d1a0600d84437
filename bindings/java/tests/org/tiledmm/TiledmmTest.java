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
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The Java binding on the CPU backend: results, every error path, lifetime, threads. */
class TiledmmTest {
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

    void run(Tiledmm mm) {
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
          double ref = alpha * dot + (beta == 0 ? 0 : beta * old);
          double bound = 2 * (k + 2) * eps * (Math.abs(alpha) * mag + Math.abs(beta * old)) + 1e-30;
          double got = c[at(i, j, ldc)];
          if (!(Math.abs(got - ref) <= bound)) {
            throw new AssertionError("C(" + i + "," + j + ") = " + got + ", expected " + ref);
          }
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
    try (Tiledmm mm = new Tiledmm(Backend.CPU, 0)) {
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
    try (Tiledmm mm = new Tiledmm(Backend.CPU, 0)) {
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
    FloatBuffer buf = ByteBuffer.allocateDirect(4 * x.length).order(ByteOrder.nativeOrder()).asFloatBuffer();
    buf.put(x).rewind();
    return buf;
  }

  @Test
  void versionsMatch() {
    assertEquals(Tiledmm.bindingVersion(), Tiledmm.version());
    assertTrue(Tiledmm.version() >= 10000);
  }

  @Test
  void settingsRoundTrip() {
    try (Tiledmm mm = new Tiledmm(Backend.CPU, 0)) {
      assertEquals(Backend.CPU, mm.backend());
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
  void libraryErrorsAreExceptionsWithStatus() {
    try (Tiledmm mm = new Tiledmm(Backend.CPU, 0)) {
      TiledmmException e = assertThrows(TiledmmException.class, () -> mm.setTileSize(7));
      assertEquals(Status.INVALID_VALUE, e.status());
      assertTrue(e.getMessage().contains("tile size"), e.getMessage());
      e = assertThrows(TiledmmException.class, () -> mm.setAlgorithm(Algorithm.TILED));
      assertEquals(Status.NOT_SUPPORTED, e.status());
      e = assertThrows(TiledmmException.class, mm::deviceInfo);
      assertEquals(Status.NOT_SUPPORTED, e.status());
      e = assertThrows(TiledmmException.class, mm::lastTime);
      assertEquals(Status.INVALID_VALUE, e.status(), "no sgemm yet");
      float[] x = new float[16];
      e = assertThrows(TiledmmException.class, () -> mm.sgemm(Layout.ROW_MAJOR,
          Transpose.NO_TRANS, Transpose.NO_TRANS, -1, 2, 2, 1f, x, 2, x, 2, 0f, x, 2));
      assertEquals(Status.INVALID_VALUE, e.status());
      assertTrue(e.getMessage().contains("m must be"), e.getMessage());
      e = assertThrows(TiledmmException.class, () -> mm.sgemm(Layout.ROW_MAJOR,
          Transpose.NO_TRANS, Transpose.NO_TRANS, 2, 2, 2, 1f, x, 1, x, 2, 0f, x, 2));
      assertTrue(e.getMessage().contains("lda"), e.getMessage());
      // The handle still works after errors.
      Case g = new Case(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, 5, 6, 7, 1f, 0f, 0, 0);
      g.run(mm);
      g.verify();
      assertTrue(mm.lastTime() >= 0);
      Timing t = mm.lastTiming();
      assertEquals(Algorithm.BLOCKED, t.algorithm);
      assertTrue(t.totalMs >= t.computeMs);
    }
  }

  @Test
  void missingCudaDeviceIsAnException() {
    TiledmmException e = assertThrows(TiledmmException.class, () -> new Tiledmm(Backend.CUDA, 4096));
    assertEquals(Status.NO_DEVICE, e.status());
  }

  @Test
  void shortArraysAreRejectedBeforeNativeCode() {
    try (Tiledmm mm = new Tiledmm(Backend.CPU, 0)) {
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
    Tiledmm mm = new Tiledmm(Backend.CPU, 0);
    mm.close();
    assertDoesNotThrow(mm::close);
    assertThrows(IllegalStateException.class, mm::lastTime);
    assertThrows(IllegalStateException.class, () -> mm.setAlgorithm(Algorithm.NAIVE));
    float[] x = new float[4];
    assertThrows(IllegalStateException.class, () -> mm.sgemm(Layout.ROW_MAJOR,
        Transpose.NO_TRANS, Transpose.NO_TRANS, 2, 2, 1, 1f, x, 1, x, 2, 0f, x, 2));
  }

  @Test
  void handlesLeftToTheGarbageCollector() {
    for (int i = 0; i < 200; i++) {
      Tiledmm mm = new Tiledmm(Backend.CPU, 0);
      mm.setTileSize(16);
    }
    System.gc();
    try (Tiledmm mm = new Tiledmm(Backend.CPU, 0)) {
      assertEquals(Backend.CPU, mm.backend());
    }
  }

  @Test
  void handlesInThreadsAndASharedHandle() throws InterruptedException {
    AtomicInteger failures = new AtomicInteger();
    Tiledmm shared = new Tiledmm(Backend.CPU, 0);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 6; t++) {
      final int id = t;
      threads.add(new Thread(() -> {
        try (Tiledmm own = new Tiledmm(Backend.CPU, 0)) {
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
  void autoBackendIsCudaOrCpu() {
    try (Tiledmm mm = new Tiledmm()) {
      assertNotEquals(Backend.AUTO, mm.backend());
    }
  }
}
