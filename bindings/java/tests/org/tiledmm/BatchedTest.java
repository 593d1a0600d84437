package org.tiledmm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Engine.sgemmStridedBatched and dgemmStridedBatched on direct buffers, on the CPU
 * backend: every product equals the single call on it bit for bit (both layouts, all
 * transposes, padding, gaps between products, A shared by every product, beta 0 over
 * NaN, a buffer position), nothing outside the products changes, the report's batch;
 * buffers too short for the last product are rejected before native code runs; the
 * library's errors are exceptions; batch 0 needs no buffer.
 */
class BatchedTest {
  private static final Random RANDOM = new Random();
  private static final Layout R = Layout.ROW_MAJOR;
  private static final Transpose N = Transpose.NO_TRANS;

  static FloatBuffer floats(int n) {
    return ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder()).asFloatBuffer();
  }

  static DoubleBuffer doubles(int n) {
    return ByteBuffer.allocateDirect(8 * n).order(ByteOrder.nativeOrder()).asDoubleBuffer();
  }

  /** One random batch; the float run and the double run of the same shapes. */
  private static void batchMatchesTheSingleCalls(Engine e, int variant) {
    Layout l = variant % 2 == 0 ? Layout.ROW_MAJOR : Layout.COL_MAJOR;
    Transpose ta = (variant / 2) % 2 == 0 ? Transpose.NO_TRANS : Transpose.TRANS;
    Transpose tb = (variant / 4) % 2 == 0 ? Transpose.NO_TRANS : Transpose.TRANS;
    boolean row = l == Layout.ROW_MAJOR;
    int m = 1 + RANDOM.nextInt(11), n = 1 + RANDOM.nextInt(11), k = 1 + RANDOM.nextInt(19);
    int batch = 2 + RANDOM.nextInt(3), pad = RANDOM.nextInt(3), gap = RANDOM.nextInt(4);
    int position = RANDOM.nextInt(3);
    boolean sharedA = variant % 3 == 2;
    int ar = ta == Transpose.TRANS ? k : m, ac = ta == Transpose.TRANS ? m : k;
    int br = tb == Transpose.TRANS ? n : k, bc = tb == Transpose.TRANS ? k : n;
    int lda = (row ? ac : ar) + pad, ldb = (row ? bc : br) + pad, ldc = (row ? n : m) + pad;
    int spanA = ((row ? ar : ac) - 1) * lda + (row ? ac : ar);
    int spanB = ((row ? br : bc) - 1) * ldb + (row ? bc : br);
    int spanC = ((row ? m : n) - 1) * ldc + (row ? n : m);
    int sa = sharedA ? 0 : spanA + gap, sb = spanB + gap, sc = spanC + gap;
    int lengthA = position + (batch - 1) * sa + spanA, lengthB = position + (batch - 1) * sb + spanB;
    int lengthC = position + (batch - 1) * sc + spanC + 3;
    double beta = variant % 4 == 0 ? 0.0 : -1.5;
    FloatBuffer fa = floats(lengthA), fb = floats(lengthB), fc = floats(lengthC);
    FloatBuffer fw = floats(lengthC);
    DoubleBuffer da = doubles(lengthA), db = doubles(lengthB), dc = doubles(lengthC);
    DoubleBuffer dw = doubles(lengthC);
    for (int i = 0; i < lengthA; i++) {
      double x = RANDOM.nextDouble() * 2 - 1;
      fa.put(i, (float) x);
      da.put(i, x);
    }
    for (int i = 0; i < lengthB; i++) {
      double x = RANDOM.nextDouble() * 2 - 1;
      fb.put(i, (float) x);
      db.put(i, x);
    }
    for (int i = 0; i < lengthC; i++) {
      double x = beta == 0 ? Double.NaN : RANDOM.nextDouble() * 2 - 1;
      fc.put(i, (float) x);
      fw.put(i, (float) x);
      dc.put(i, x);
      dw.put(i, x);
    }
    for (int p = 0; p < batch; p++) {
      fa.position(position + p * sa);
      fb.position(position + p * sb);
      fw.position(position + p * sc);
      e.sgemm(l, ta, tb, m, n, k, 0.75f, fa, lda, fb, ldb, (float) beta, fw, ldc);
      da.position(position + p * sa);
      db.position(position + p * sb);
      dw.position(position + p * sc);
      e.dgemm(l, ta, tb, m, n, k, 0.75, da, lda, db, ldb, beta, dw, ldc);
    }
    for (java.nio.Buffer x : new java.nio.Buffer[] {fa, fb, fc, da, db, dc}) x.position(position);
    e.sgemmStridedBatched(l, ta, tb, m, n, k, 0.75f, fa, lda, sa, fb, ldb, sb, (float) beta, fc,
        ldc, sc, batch);
    assertEquals(batch, e.getLastReport().getBatch());
    e.dgemmStridedBatched(l, ta, tb, m, n, k, 0.75, da, lda, sa, db, ldb, sb, beta, dc, ldc, sc,
        batch);
    for (int i = 0; i < lengthC; i++) {
      assertEquals(Float.floatToRawIntBits(fw.get(i)), Float.floatToRawIntBits(fc.get(i)),
          "variant " + variant + ", float element " + i);
      assertEquals(Double.doubleToRawLongBits(dw.get(i)), Double.doubleToRawLongBits(dc.get(i)),
          "variant " + variant + ", double element " + i);
    }
    assertEquals(position, fc.position(), "positions are not changed");
  }

  @Test
  void everyProductIsTheSingleCallBitForBit() {
    try (Engine e = new Engine(Backend.CPU, 0)) {
      for (int variant = 0; variant < 48; variant++) batchMatchesTheSingleCalls(e, variant);
    }
  }

  @Test
  void argumentErrors() {
    try (Engine e = new Engine(Backend.CPU, 0)) {
      // Three 4 x 4 products 16 apart need 48 elements in each buffer.
      FloatBuffer a = floats(48), b = floats(48), c = floats(48);
      e.sgemmStridedBatched(R, N, N, 4, 4, 4, 1f, a, 4, 16, b, 4, 16, 0f, c, 4, 16, 3);
      assertThrows(IllegalArgumentException.class,
          () -> e.sgemmStridedBatched(R, N, N, 4, 4, 4, 1f, a, 4, 16, b, 4, 16, 0f, floats(47), 4,
              16, 3), "C one short");
      DoubleBuffer d = doubles(48);
      assertThrows(IllegalArgumentException.class,
          () -> e.dgemmStridedBatched(R, N, N, 4, 4, 4, 1, d, 4, 17, d, 4, 0, 0, doubles(48), 4,
              16, 3), "A's stride");
      TiledmmException ex = assertThrows(TiledmmException.class,
          () -> e.sgemmStridedBatched(R, N, N, 4, 4, 4, 1f, a, 4, 16, b, 4, 16, 0f, c, 4, 15, 3));
      assertEquals(Status.INVALID_VALUE, ex.getStatus());
      assertTrue(ex.getMessage().contains("share elements"), ex.getMessage());
      ex = assertThrows(TiledmmException.class,
          () -> e.sgemmStridedBatched(R, N, N, 4, 4, 4, 1f, a, 4, 16, b, 4, 16, 0f, c, 4, 16, -1));
      assertTrue(ex.getMessage().contains("batch must be >= 0"), ex.getMessage());
      e.dgemmStridedBatched(R, N, N, 4, 4, 4, 1, null, 4, 16, null, 4, 16, 0, null, 4, 16, 0);
      assertEquals(0, e.getLastReport().getBatch());
    }
  }
}
