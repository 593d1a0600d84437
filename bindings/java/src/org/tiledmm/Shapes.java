package org.tiledmm;

/**
 * The checks that keep a wrong argument from reaching native code with an array
 * too short for it: for each matrix the call reads or writes, the CBLAS footprint
 * ((outer - 1) * ld + inner elements from its offset) must fit in its array.
 * Sizes and leading dimensions that are themselves invalid are left to the library,
 * which rejects them before touching memory.
 */
final class Shapes {
  private Shapes() {}

  /** Lengths are -1 for a null array; alpha is sgemm's float or dgemm's double. */
  static void check(Layout layout, Transpose transA, Transpose transB, long m, long n, long k,
      double alpha, long lengthA, long offsetA, long lda, long lengthB, long offsetB, long ldb,
      long lengthC, long offsetC, long ldc) {
    if (layout == null || transA == null || transB == null) {
      throw new IllegalArgumentException("layout and transposes must not be null");
    }
    if (m < 0 || n < 0 || k < 0) return;  // the library says which one is negative
    boolean row = layout == Layout.ROW_MAJOR;
    boolean usesC = m > 0 && n > 0;
    boolean usesAB = usesC && k > 0 && alpha != 0.0;
    boolean ta = transA == Transpose.TRANS, tb = transB == Transpose.TRANS;
    matrix("A", usesAB, row, ta ? k : m, ta ? m : k, lda, lengthA, offsetA);
    matrix("B", usesAB, row, tb ? n : k, tb ? k : n, ldb, lengthB, offsetB);
    matrix("C", usesC, row, m, n, ldc, lengthC, offsetC);
  }

  /**
   * A strided batch: each matrix's footprint is its last product's, (batch - 1) * stride
   * past the first's. A negative batch or stride is left to the library, which rejects it
   * before touching anything; batch 0 uses no matrix.
   */
  static void checkBatched(Layout layout, Transpose transA, Transpose transB, long m, long n,
      long k, double alpha, long lengthA, long offsetA, long lda, long strideA, long lengthB,
      long offsetB, long ldb, long strideB, long lengthC, long offsetC, long ldc, long strideC,
      long batch) {
    if (layout == null || transA == null || transB == null) {
      throw new IllegalArgumentException("layout and transposes must not be null");
    }
    if (m < 0 || n < 0 || k < 0 || batch < 0 || strideA < 0 || strideB < 0 || strideC < 0) {
      return;
    }
    boolean row = layout == Layout.ROW_MAJOR;
    boolean usesC = m > 0 && n > 0 && batch > 0;
    boolean usesAB = usesC && k > 0 && alpha != 0.0;
    boolean ta = transA == Transpose.TRANS, tb = transB == Transpose.TRANS;
    long last = Math.max(batch - 1, 0);
    matrix("A", usesAB, row, ta ? k : m, ta ? m : k, lda, lengthA, offsetA, last, strideA);
    matrix("B", usesAB, row, tb ? n : k, tb ? k : n, ldb, lengthB, offsetB, last, strideB);
    matrix("C", usesC, row, m, n, ldc, lengthC, offsetC, last, strideC);
  }

  private static void matrix(String name, boolean used, boolean row, long rows, long cols,
      long ld, long length, long offset) {
    matrix(name, used, row, rows, cols, ld, length, offset, 0, 0);
  }

  private static void matrix(String name, boolean used, boolean row, long rows, long cols,
      long ld, long length, long offset, long last, long stride) {
    if (offset < 0) throw new IllegalArgumentException(name + ": negative offset " + offset);
    if (!used) return;
    if (length < 0) throw new IllegalArgumentException(name + " is null but the call needs it");
    long outer = row ? rows : cols, inner = row ? cols : rows;
    if (ld < inner) return;  // invalid leading dimension: the library rejects it
    long needed;
    try {
      needed = Math.addExact(Math.addExact(Math.addExact(Math.multiplyExact(last, stride),
          Math.multiplyExact(outer - 1, ld)), inner), offset);
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(name + ": size overflows a long", e);
    }
    if (needed > length) {
      throw new IllegalArgumentException(name + " needs " + needed + " elements from index 0"
          + " (offset " + offset + ", ld " + ld + ") but has " + length);
    }
  }
}
