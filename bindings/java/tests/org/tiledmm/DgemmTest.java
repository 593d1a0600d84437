package org.tiledmm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Engine.dgemm on the CPU backend, test for test the double twin of EngineTest's sgemm
 * tests: results (every layout and transpose, offsets, padding, the three overloads),
 * every argument error (before native code runs), the copies of double[] arrays, threads,
 * and the report's precision. The results are checked so that a float-rounded result
 * fails: integer inputs up to 2^20, whose products and sums double holds exactly, are
 * compared bit for bit; random inputs in [-1, 1] within a few double ulps per term.
 * {@link #floatResultsFailTheCheck} proves that the checks tell the two apart.
 */
class DgemmTest {
  private static final Random RANDOM = new Random();
  private static final Layout R = Layout.ROW_MAJOR;
  private static final Layout C = Layout.COL_MAJOR;
  private static final Transpose N = Transpose.NO_TRANS;
  private static final Transpose T = Transpose.TRANS;

  /** How a case fills its matrices. */
  enum Fill {
    /**
     * Integers in [-2^20, 2^20]: every product (< 2^40) and sum (k <= 129: < 2^48) is
     * exact in double, in any order of summation, and so is alpha * sum + beta * c for
     * the alphas and betas used here (multiples of 1/4), so the result is compared for
     * equality. Float, with 24 bits, rounds the products.
     */
    INTEGERS,
    /** Uniform in [-1, 1], compared within (k + 2) double ulps per term, twice. */
    UNIT
  }

  /** A random dgemm call, its arrays (with padding and offsets) and its reference. */
  static final class Case {
    final Layout layout;
    final Transpose ta, tb;
    final int m, n, k, offset;
    final double alpha, beta;
    final long lda, ldb, ldc;
    final double[] a, b, c, c0;
    final Fill fill;

    Case(Fill fill, Layout layout, Transpose ta, Transpose tb, int m, int n, int k, double alpha,
        double beta, int pad, int offset) {
      this.fill = fill;
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
      int ar = ta == T ? k : m, ac = ta == T ? m : k;
      int br = tb == T ? n : k, bc = tb == T ? k : n;
      lda = Math.max(1, row ? ac : ar) + pad;
      ldb = Math.max(1, row ? bc : br) + pad;
      ldc = Math.max(1, row ? n : m) + pad;
      a = random(fill, offset + (int) (Math.max(1, row ? ar : ac) * lda));
      b = random(fill, offset + (int) (Math.max(1, row ? br : bc) * ldb));
      c = random(fill, offset + (int) (Math.max(1, row ? m : n) * ldc));
      c0 = c.clone();
    }

    Case(Layout layout, Transpose ta, Transpose tb, int m, int n, int k, double alpha,
        double beta, int pad, int offset) {
      this(Fill.UNIT, layout, ta, tb, m, n, k, alpha, beta, pad, offset);
    }

    static double[] random(Fill fill, int size) {
      double[] x = new double[size];
      for (int i = 0; i < size; i++) {
        x[i] = fill == Fill.INTEGERS ? RANDOM.nextInt((1 << 21) + 1) - (1 << 20)
                                     : RANDOM.nextDouble() * 2 - 1;
      }
      return x;
    }

    int at(int r, int col, long ld) {
      return offset + (int) (layout == Layout.ROW_MAJOR ? r * ld + col : col * ld + r);
    }

    double opA(int i, int q) {
      return ta == T ? a[at(q, i, lda)] : a[at(i, q, lda)];
    }

    double opB(int q, int j) {
      return tb == T ? b[at(j, q, ldb)] : b[at(q, j, ldb)];
    }

    void run(Engine mm) {
      mm.dgemm(layout, ta, tb, m, n, k, alpha, a, offset, lda, b, offset, ldb, beta, c, offset,
          ldc);
    }

    void verify() {
      verify(c);
    }

    /** Checks `got` (c, or a stand-in for it) against the reference. */
    void verify(double[] got) {
      double eps = Math.ulp(1.0);
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
          double bound = fill == Fill.INTEGERS ? 0
              : 2 * (k + 2) * eps * (Math.abs(alpha) * mag + Math.abs(scaled)) + 1e-300;
          double value = got[at(i, j, ldc)];
          if (!(Math.abs(value - ref) <= bound)) {
            throw new AssertionError("C(" + i + "," + j + ") = " + value + ", expected " + ref
                + " (" + fill + ", bound " + bound + ")");
          }
        }
      }
      // Nothing outside the m x n part (the offset, the padding, the tail) was written.
      boolean[] inside = new boolean[got.length];
      for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) inside[at(i, j, ldc)] = true;
      }
      for (int x = 0; x < got.length; x++) {
        if (!inside[x]
            && Double.doubleToRawLongBits(got[x]) != Double.doubleToRawLongBits(c0[x])) {
          throw new AssertionError("c[" + x + "], outside the m x n part, was written");
        }
      }
    }
  }

  private static void assertRanInDouble(Engine mm) {
    Report r = mm.getLastReport();
    assertEquals(Precision.DOUBLE, r.getPrecision(), r.toString());
    assertEquals(MathMode.FP32, r.getMathMode(), "strict, in its precision: " + r);
  }

  @ParameterizedTest
  @MethodSource("org.tiledmm.EngineTest#layoutsAndTransposes")
  void matchesTheReference(Layout layout, Transpose ta, Transpose tb) {
    int[][] shapes = {{1, 1, 1}, {7, 13, 11}, {33, 17, 65}, {64, 64, 64}, {100, 37, 129}};
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      for (Algorithm algo : new Algorithm[] {Algorithm.AUTO, Algorithm.BLOCKED, Algorithm.NAIVE}) {
        mm.setAlgorithm(algo);
        String kernel = algo == Algorithm.NAIVE ? "cpu_f64_naive" : "cpu_f64_blocked";
        for (Fill fill : Fill.values()) {
          for (int[] s : shapes) {
            Case plain = new Case(fill, layout, ta, tb, s[0], s[1], s[2], 1, 0, 0, 0);
            plain.run(mm);
            plain.verify();
            assertRanInDouble(mm);
            String ran = mm.getLastReport().getKernel();
            if (algo != Algorithm.AUTO || !ran.startsWith("system BLAS (")) {
              assertEquals(kernel, ran);  // AUTO may run the system BLAS instead
            }
            // Random inputs also take an alpha and a beta that float cannot hold.
            double alpha = fill == Fill.UNIT ? -0.3 : -0.5;
            double beta = fill == Fill.UNIT ? 1.1 : 1.25;
            Case padded = new Case(fill, layout, ta, tb, s[0], s[1], s[2], alpha, beta, 3, 5);
            padded.run(mm);
            padded.verify();
            assertRanInDouble(mm);
          }
        }
      }
    }
  }

  /** The checks above reject what a float product of the same call would give. */
  @Test
  void floatResultsFailTheCheck() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      for (Fill fill : Fill.values()) {
        Case g = new Case(fill, R, N, T, 9, 8, 33, -0.5, 1.25, 2, 3);
        g.run(mm);
        g.verify();
        double[] rounded = g.c.clone();  // its m x n part rounded to float
        for (int i = 0; i < g.m; i++) {
          for (int j = 0; j < g.n; j++) {
            int x = g.at(i, j, g.ldc);
            rounded[x] = (float) rounded[x];
          }
        }
        assertThrows(AssertionError.class, () -> g.verify(rounded), fill + ", rounded to float");
      }
      // The library's own sgemm of the integer case (its inputs are floats exactly).
      Case g = new Case(Fill.INTEGERS, C, T, N, 9, 8, 33, -0.5, 1.25, 2, 3);
      float[] a = toFloat(g.a), b = toFloat(g.b), c = toFloat(g.c0);
      mm.sgemm(g.layout, g.ta, g.tb, g.m, g.n, g.k, (float) g.alpha, a, g.offset, g.lda, b,
          g.offset, g.ldb, (float) g.beta, c, g.offset, g.ldc);
      assertEquals(Precision.SINGLE, mm.getLastReport().getPrecision());
      double[] fromSgemm = new double[c.length];
      for (int x = 0; x < c.length; x++) fromSgemm[x] = c[x];
      assertThrows(AssertionError.class, () -> g.verify(fromSgemm), "sgemm's result");
      g.run(mm);
      g.verify();
      assertRanInDouble(mm);
    }
  }

  static float[] toFloat(double[] x) {
    float[] y = new float[x.length];
    for (int i = 0; i < x.length; i++) y[i] = (float) x[i];
    return y;
  }

  @Test
  void overloadsWithoutOffsetsAndDirectBuffersAgree() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      Case g = new Case(Fill.INTEGERS, R, T, N, 12, 10, 21, 2, -1, 1, 0);
      mm.dgemm(g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c,
          g.ldc);
      g.verify();
      assertRanInDouble(mm);
      Case h = new Case(Fill.INTEGERS, C, N, T, 12, 10, 21, 2, -1, 1, 0);
      DoubleBuffer a = direct(h.a), b = direct(h.b), c = direct(h.c);
      mm.dgemm(h.layout, h.ta, h.tb, h.m, h.n, h.k, h.alpha, a, h.lda, b, h.ldb, h.beta, c, h.ldc);
      c.get(h.c);
      h.verify();
      assertRanInDouble(mm);
    }
  }

  @Test
  void directBuffersWork() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      Case g = new Case(C, T, N, 20, 30, 40, 1, 0.5, 2, 3);
      DoubleBuffer a = direct(g.a), b = direct(g.b), c = direct(g.c);
      a.position(g.offset);
      b.position(g.offset);
      c.position(g.offset);
      mm.dgemm(g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a, g.lda, b, g.ldb, g.beta, c, g.ldc);
      assertEquals(g.offset, c.position(), "positions are not moved");
      assertEquals(g.offset, a.position(), "positions are not moved");
      c.position(0);
      c.get(g.c);
      g.verify();
      assertRanInDouble(mm);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(g.layout, g.ta, g.tb, g.m, g.n, g.k, 1, DoubleBuffer.wrap(g.a), g.lda, b,
              g.ldb, 0, c, g.ldc), "heap buffers");
      assertEquals("A: DoubleBuffer must be direct (ByteBuffer.allocateDirect); for heap data"
          + " use the double[] form", e.getMessage());
      e = assertThrows(IllegalArgumentException.class, () -> mm.dgemm(g.layout, g.ta, g.tb, g.m,
          g.n, g.k, 1, a, g.lda, b, g.ldb, 0, c.asReadOnlyBuffer(), g.ldc), "read-only C");
      assertEquals("C is read-only", e.getMessage());
      // A limit one element short of C's footprint from its position; null where needed.
      int needed = g.offset + (g.n - 1) * (int) g.ldc + g.m;
      DoubleBuffer shortC = direct(g.c);
      shortC.position(g.offset).limit(needed - 1);
      e = assertThrows(IllegalArgumentException.class, () -> mm.dgemm(g.layout, g.ta, g.tb, g.m,
          g.n, g.k, 1, a, g.lda, b, g.ldb, 0, shortC, g.ldc), "short C");
      assertEquals("C needs " + needed + " elements from index 0 (offset " + g.offset + ", ld "
          + g.ldc + ") but has " + (needed - 1), e.getMessage());
      shortC.limit(needed);
      assertDoesNotThrow(() -> mm.dgemm(g.layout, g.ta, g.tb, g.m, g.n, g.k, 1, a, g.lda, b,
          g.ldb, 0, shortC, g.ldc), "C exactly as long as its footprint");
      assertThrows(IllegalArgumentException.class, () -> mm.dgemm(g.layout, g.ta, g.tb, g.m, g.n,
          g.k, 1, null, g.lda, b, g.ldb, 0, c, g.ldc), "null A");
    }
  }

  static DoubleBuffer direct(double[] x) {
    return direct(x, ByteOrder.nativeOrder());
  }

  static DoubleBuffer direct(double[] x, ByteOrder order) {
    DoubleBuffer buf = ByteBuffer.allocateDirect(8 * x.length).order(order).asDoubleBuffer();
    buf.put(x).rewind();
    return buf;
  }

  @Test
  void buffersNotInNativeOrderAreRejectedBeforeNativeCode() {
    double[] x = Case.random(Fill.UNIT, 64);
    DoubleBuffer defaultOrder = ByteBuffer.allocateDirect(8 * x.length).asDoubleBuffer();
    defaultOrder.put(x).rewind();
    DoubleBuffer wrong = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN
        ? direct(x, ByteOrder.LITTLE_ENDIAN) : defaultOrder;
    assertNotEquals(ByteOrder.nativeOrder(), wrong.order());
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      DoubleBuffer good = direct(x), c = direct(new double[64]);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(R, N, N, 8, 8, 8, 1, wrong, 8, good, 8, 0, c, 8), "A");
      assertEquals("A: DoubleBuffer is " + wrong.order() + " but the library reads "
          + ByteOrder.nativeOrder() + " doubles: make it with ByteBuffer.allocateDirect(...)"
          + ".order(ByteOrder.nativeOrder()).asDoubleBuffer()", e.getMessage());
      assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(R, N, N, 8, 8, 8, 1, good, 8, wrong, 8, 0, c, 8), "B");
      assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(R, N, N, 8, 8, 8, 1, good, 8, good, 8, 0, wrong, 8), "C");
      for (int i = 0; i < 64; i++) assertEquals(x[i], wrong.get(i), "C was not written");
      assertThrows(TiledmmException.class, mm::getLastTime, "no product ran");
    }
  }

  @Test
  void libraryErrorsAreExceptionsWithStatus() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      double[] x = new double[16];
      TiledmmException e = assertThrows(TiledmmException.class,
          () -> mm.dgemm(R, N, N, -1, 2, 2, 1, x, 2, x, 2, 0, x, 2));
      assertEquals(Status.INVALID_VALUE, e.getStatus());
      assertTrue(e.getMessage().contains("m must be"), e.getMessage());
      e = assertThrows(TiledmmException.class,
          () -> mm.dgemm(R, N, N, 2, 2, 2, 1, x, 1, x, 2, 0, x, 2));
      assertTrue(e.getMessage().contains("lda"), e.getMessage());
      e = assertThrows(TiledmmException.class, mm::getLastTime);
      assertEquals(Status.INVALID_VALUE, e.getStatus(), "no product has succeeded yet");
      // The handle still works after errors.
      Case g = new Case(R, N, N, 5, 6, 7, 1, 0, 0, 0);
      g.run(mm);
      g.verify();
      assertTrue(mm.getLastTime() >= 0);
      Timing t = mm.getLastTiming();
      assertEquals(Algorithm.BLOCKED, t.getAlgorithm());
      assertTrue(t.getTotalMs() >= t.getComputeMs());
    }
  }

  @Test
  void shortArraysAreRejectedBeforeNativeCode() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      double[] a = new double[6 * 4], b = new double[4 * 5], c = new double[6 * 5];
      Arrays.fill(c, 3.0);
      // One element short, for each matrix, in each layout.
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(R, N, N, 6, 5, 4, 1, new double[23], 4, b, 5, 0, c, 5));
      assertEquals("A needs 24 elements from index 0 (offset 0, ld 4) but has 23",
          e.getMessage());
      assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(R, N, N, 6, 5, 4, 1, a, 4, new double[19], 5, 0, c, 5));
      assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(R, N, N, 6, 5, 4, 1, a, 4, b, 5, 0, new double[29], 5));
      assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(C, T, T, 6, 5, 4, 1, a, 4, b, 5, 0, new double[29], 6));
      // Offsets push the footprint past the end; negative offsets; null arrays.
      e = assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(R, N, N, 6, 5, 4, 1, a, 1, 4, b, 0, 5, 0, c, 0, 5));
      assertEquals("A needs 25 elements from index 0 (offset 1, ld 4) but has 24",
          e.getMessage());
      e = assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(R, N, N, 6, 5, 4, 1, a, -1, 4, b, 0, 5, 0, c, 0, 5));
      assertEquals("A: negative offset -1", e.getMessage());
      e = assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(R, N, N, 6, 5, 4, 1, null, 4, b, 5, 0, c, 5));
      assertEquals("A is null but the call needs it", e.getMessage());
      assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(R, N, N, 6, 5, 4, 1, a, 4, b, 5, 0, null, 5));
      assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(null, N, N, 6, 5, 4, 1, a, 4, b, 5, 0, c, 5));
      assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(R, null, N, 6, 5, 4, 1, a, 4, b, 5, 0, c, 5));
      // A huge leading dimension overflows the footprint: rejected, no crash.
      e = assertThrows(IllegalArgumentException.class,
          () -> mm.dgemm(R, N, N, 6, 5, 4, 1, a, Long.MAX_VALUE / 2, b, 5, 0, c, 5));
      assertEquals("A: size overflows a long", e.getMessage());
      // None of them reached the library: no product ran, C untouched.
      assertThrows(TiledmmException.class, mm::getLastTime, "no product ran");
      for (double v : c) assertEquals(3.0, v);
      assertDoesNotThrow(() -> mm.dgemm(R, N, N, 6, 5, 4, 1, a, 4, b, 5, 0, c, 5));
      // Null arrays that the call does not need are fine (k = 0 or alpha = 0: C = beta * C).
      Arrays.fill(c, 3.0);
      assertDoesNotThrow(() -> mm.dgemm(R, N, N, 6, 5, 0, 1, null, 1, null, 5, 0, c, 5));
      assertArrayEquals(new double[30], c);
      Arrays.fill(c, 3.0);
      assertDoesNotThrow(() -> mm.dgemm(R, N, N, 6, 5, 4, 0, null, 4, null, 5, -2, c, 5));
      for (double v : c) assertEquals(-6.0, v);
      assertRanInDouble(mm);
    }
  }

  @Test
  void closeTwiceAndUseAfterClose() {
    Engine mm = new Engine(Backend.CPU, 0);
    mm.close();
    assertDoesNotThrow(mm::close);
    double[] x = new double[4];
    assertThrows(IllegalStateException.class,
        () -> mm.dgemm(R, N, N, 2, 2, 1, 1, x, 1, x, 2, 0, x, 2));
    assertThrows(IllegalStateException.class,
        () -> mm.dgemm(R, N, N, 2, 2, 1, 1, x, 0, 1, x, 0, 2, 0, x, 0, 2));
    DoubleBuffer d = direct(x);
    assertThrows(IllegalStateException.class,
        () -> mm.dgemm(R, N, N, 2, 2, 1, 1, d, 1, d, 2, 0, d, 2));
  }

  @Test
  void handlesInThreadsAndASharedHandle() throws InterruptedException {
    // Each thread multiplies in double on its own engine and in both precisions on a
    // shared one.
    AtomicInteger failures = new AtomicInteger();
    Engine shared = new Engine(Backend.CPU, 0);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 6; t++) {
      final int id = t;
      threads.add(new Thread(() -> {
        try (Engine own = new Engine(Backend.CPU, 0)) {
          for (int i = 0; i < 5; i++) {
            Case g = new Case(Fill.INTEGERS, R, N, T, 20 + id, 17 + i, 33, 1, 0, 1, 2);
            g.run(own);
            g.verify();
            Case h = new Case(C, T, N, 9 + i, 25 + id, 14, 2, -1, 0, 0);
            h.run(shared);
            h.verify();
            EngineTest.Case f = new EngineTest.Case(R, T, T, 7 + i, 5 + id, 12, 1f, 0.5f, 1, 1);
            f.run(shared);
            f.verify();
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
    // double[] arrays are copied in pieces of TMMB_COPY_CHUNK doubles: rows longer than a
    // piece, with and without offsets.
    int chunk = TiledmmNativeConstants.TMMB_COPY_CHUNK;
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      Case wide = new Case(Fill.INTEGERS, R, N, N, 3, chunk + 17, 2, 1, 0.5, 5, 3);
      wide.run(mm);
      wide.verify();
      Case tall = new Case(C, T, N, 2 * chunk + 1, 2, 3, -1, 2, 0, 1);
      tall.run(mm);
      tall.verify();
      Case small = new Case(R, T, T, 5, 4, 3, 1, 1, 2, 0);  // after the large ones
      small.run(mm);
      small.verify();
    }
  }

  @Test
  void scaleOnlyAndEmptyProducts() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      // alpha = 0 or k = 0: C = beta * C, A and B unread.
      Case alphaZero = new Case(R, N, T, 6, 5, 4, 0, 1.5, 2, 1);
      alphaZero.run(mm);
      alphaZero.verify();
      assertRanInDouble(mm);
      assertTrue(mm.getLastReport().getKernel().endsWith("scale"), mm.getLastReport().toString());
      Case kZero = new Case(C, T, N, 6, 5, 0, 1, -2, 1, 3);
      kZero.run(mm);
      kZero.verify();
      assertRanInDouble(mm);
      // m = 0 or n = 0: nothing to do, nothing written.
      for (int[] s : new int[][] {{0, 5, 4}, {6, 0, 4}}) {
        Case empty = new Case(R, N, N, s[0], s[1], s[2], 1, 1, 1, 2);
        empty.run(mm);
        empty.verify();
        assertEquals("none", mm.getLastReport().getKernel());
        assertRanInDouble(mm);
      }
    }
  }

  @Test
  void invalidArgumentsAreNamedByTheLibrary() {
    double[] x = new double[64];
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      TiledmmException e = assertThrows(TiledmmException.class,
          () -> mm.dgemm(C, N, N, 4, 4, 4, 1, x, 3, x, 4, 1, x, 4));
      assertTrue(e.getMessage().contains("lda must be >= 4"), e.getMessage());
      e = assertThrows(TiledmmException.class,
          () -> mm.dgemm(R, N, N, 4, 4, 4, 1, x, 4, x, 4, 1, x, 3));
      assertTrue(e.getMessage().contains("ldc must be >= 4"), e.getMessage());
      e = assertThrows(TiledmmException.class,
          () -> mm.dgemm(R, N, N, 4, -4, 4, 1, x, 4, x, 4, 1, x, 4));
      assertTrue(e.getMessage().contains("n must be >= 0"), e.getMessage());
      assertEquals(Status.INVALID_VALUE, e.getStatus());
    }
  }

  @Test
  void betaZeroIgnoresNaNInC() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      Case g = new Case(C, N, N, 9, 7, 5, 1, 0, 2, 1);
      Arrays.fill(g.c, Double.NaN);
      System.arraycopy(g.c, 0, g.c0, 0, g.c.length);
      g.run(mm);
      g.verify();  // no NaN in the m x n part; the NaN around it untouched
    }
  }

  /** The report says which precision ran, call by call, on one engine. */
  @Test
  void reportSaysDoubleAfterADgemm() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      mm.setOption(Option.HOST_THREADS, 2);
      Case g = new Case(R, N, N, 256, 128, 128, 1, 0, 0, 0);  // large enough for 2 threads
      g.run(mm);
      g.verify();
      Report r = mm.getLastReport();
      assertEquals(Precision.DOUBLE, r.getPrecision());
      assertEquals("cpu_f64_blocked", r.getKernel());
      assertEquals(Algorithm.BLOCKED, r.getAlgorithm());
      assertEquals(MathMode.FP32, r.getMathMode(), "strict, in its precision");
      assertEquals(2, r.getHostThreads(), "host_threads is honoured");
      assertEquals(Backend.CPU, r.getBackend());
      assertTrue(r.toString().startsWith("cpu_f64_blocked on CPU"), r.toString());
      new EngineTest.Case(R, N, N, 30, 20, 10, 1f, 0f, 0, 0).run(mm);
      assertEquals(Precision.SINGLE, mm.getLastReport().getPrecision());
      assertEquals("cpu_blocked", mm.getLastReport().getKernel());
      // A failed dgemm leaves the report of the last successful product.
      assertThrows(TiledmmException.class, () -> mm.dgemm(R, N, N, 2, 2, 2, 1, new double[4], 1,
          new double[4], 2, 0, new double[4], 2));
      assertEquals(Precision.SINGLE, mm.getLastReport().getPrecision());
      double[] one = new double[1];
      mm.dgemm(R, N, N, 1, 1, 1, 1, new double[] {2}, 1, new double[] {3}, 1, 0, one, 1);
      assertEquals(6.0, one[0]);
      assertEquals(Precision.DOUBLE, mm.getLastReport().getPrecision());
      // The math mode does not change a dgemm.
      mm.setOption(Option.MATH_MODE, MathMode.TF32.value);
      Case t = new Case(Fill.INTEGERS, R, N, N, 9, 9, 9, 1, 0, 0, 0);
      t.run(mm);
      t.verify();
      assertRanInDouble(mm);
    }
  }

  /** Each double-precision CPU kernel runs under dgemm when its settings are chosen. */
  @Test
  void everyDoubleCpuKernelRuns() {
    int seen = 0;
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      for (KernelInfo k : Engine.getKernels()) {
        if (k.getBackend() != Backend.CPU || k.getPrecision() != Precision.DOUBLE) continue;
        mm.setAlgorithm(k.getAlgorithm());
        mm.setTileSize(k.getTileSize());
        Case g = new Case(Fill.INTEGERS, C, N, T, 17, 19, 23, 1, 0, 0, 0);
        g.run(mm);
        g.verify();
        assertEquals(k.getName(), mm.getLastReport().getKernel());
        assertRanInDouble(mm);
        seen++;
      }
    }
    assertTrue(seen >= 2, seen + " double CPU kernels");
  }

  /**
   * double[] arrays, like float[] ones, are copied in pieces, not held with
   * GetPrimitiveArrayCritical for the whole product: a garbage collection requested while
   * a long product runs happens while it runs, and C's padding, written by this thread
   * meanwhile, is not overwritten when the product copies C back.
   */
  @Test
  void arraysAreNotHeldWhileTheProductRuns() throws Exception {
    final int size = 1000;  // the naive CPU loop: about a second, far longer than a GC
    final int ldc = size + 1;  // one column of padding in each row of C
    double[] a = new double[size * size], c = new double[size * ldc];
    double[] b = Case.random(Fill.INTEGERS, size * size);
    Arrays.fill(a, 1.0);  // so that C(i, j) = the sum of column j of B, exactly
    Arrays.fill(c, -7.0);
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      mm.setAlgorithm(Algorithm.NAIVE);
      CountDownLatch starting = new CountDownLatch(1);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread worker = new Thread(() -> {
        try {
          starting.countDown();
          mm.dgemm(R, N, N, size, size, size, 1, a, size, b, size, 0, c, ldc);
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
      for (int i = 0; i < size; i++) c[i * ldc + size] = 42.0;
      worker.join();
      if (failure.get() != null) throw new AssertionError(failure.get());
      assertTrue(workerStillRunning, "the product outlasts the collection (make it longer)");
      assertTrue(collected > 0, "System.gc() did not collect while the product ran");
      for (int j = 0; j < size; j++) {
        double sum = 0;
        for (int q = 0; q < size; q++) sum += b[q * size + j];
        for (int i = 0; i < size; i++) assertEquals(sum, c[i * ldc + j], "C(" + i + "," + j + ")");
      }
      for (int i = 0; i < size; i++) {
        assertEquals(42.0, c[i * ldc + size], "padding of row " + i + " was written back");
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

  /** The deprecated 1.0 class is an Engine, so it has dgemm too. */
  @Test
  @SuppressWarnings("deprecation")
  void deprecatedClassHasDgemm() {
    try (Tiledmm mm = new Tiledmm(Backend.CPU, 0)) {
      Case g = new Case(Fill.INTEGERS, R, N, N, 5, 6, 7, 1, 0, 0, 0);
      g.run(mm);
      g.verify();
      assertRanInDouble(mm);
    }
  }
}
