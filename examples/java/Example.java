// Example: multiply two matrices with tiledmm from Java, in float and in double, check the
// results, print the time.
//
//   java -cp build/bindings/java/tiledmm-natives.jar:build/examples/java Example [--overhead]
//
// --overhead times repeated calls at 64^3 and 1024^3 (wall clock per call), to compare
// with the same loop in C (sgemm_basic --overhead) and C# (Example.exe --overhead).
import java.util.Random;
import org.tiledmm.Engine;
import org.tiledmm.Layout;
import org.tiledmm.Transpose;

public final class Example {
  public static void main(String[] args) {
    final int m = 300, n = 200, k = 500;
    Random random = new Random(42);
    float[] a = new float[m * k], b = new float[k * n], c = new float[m * n];
    for (int i = 0; i < a.length; i++) a[i] = random.nextFloat() - 0.5f;
    for (int i = 0; i < b.length; i++) b[i] = random.nextFloat() - 0.5f;

    try (Engine mm = new Engine()) {
      mm.sgemm(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, m, n, k, 1f, a, k, b, n,
          0f, c, n);
      double maxError = 0;
      for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) {
          double ref = 0;
          for (int q = 0; q < k; q++) ref += (double) a[i * k + q] * b[q * n + j];
          maxError = Math.max(maxError, Math.abs(ref - c[i * n + j]));
        }
      }
      // The report says which kernel ran, on how many host threads, and where the time went.
      System.out.printf("tiledmm %d: %dx%dx%d, %s; max error %.2e%n", Engine.getVersion(), m, n,
          k, mm.getLastReport(), maxError);
      if (maxError > 1e-3) {
        System.err.println("result is wrong");
        System.exit(1);
      }
      // The same product in double precision: dgemm takes double[] (or DoubleBuffers).
      double[] x = new double[m * k], y = new double[k * n], z = new double[m * n];
      for (int i = 0; i < x.length; i++) x[i] = a[i];
      for (int i = 0; i < y.length; i++) y[i] = b[i];
      mm.dgemm(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, m, n, k, 1.0, x, k, y, n,
          0.0, z, n);
      double maxErrorDouble = 0;
      for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++) {
          double ref = 0;
          for (int q = 0; q < k; q++) ref += x[i * k + q] * y[q * n + j];
          maxErrorDouble = Math.max(maxErrorDouble, Math.abs(ref - z[i * n + j]));
        }
      }
      System.out.printf("in double: %s; max error %.2e%n", mm.getLastReport().getPrecision(),
          maxErrorDouble);
      if (maxErrorDouble > 1e-12) {
        System.err.println("double result is wrong");
        System.exit(1);
      }
      if (args.length > 0 && args[0].equals("--overhead")) {
        for (int size : new int[] {64, 1024}) overhead(mm, size);
      }
    }
  }

  static void overhead(Engine mm, int size) {
    float[] a = new float[size * size], b = new float[size * size], c = new float[size * size];
    java.util.Arrays.fill(a, 0.5f);
    java.util.Arrays.fill(b, 0.25f);
    int calls = size <= 64 ? 20000 : 20;
    for (int i = 0; i < calls / 10 + 1; i++) run(mm, size, a, b, c);  // warm-up
    long t0 = System.nanoTime();
    for (int i = 0; i < calls; i++) run(mm, size, a, b, c);
    double us = (System.nanoTime() - t0) / 1e3 / calls;
    System.out.printf("java  %4d^3: %10.2f us per call (%d calls)%n", size, us, calls);
  }

  static void run(Engine mm, int s, float[] a, float[] b, float[] c) {
    mm.sgemm(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, s, s, s, 1f, a, s, b, s, 0f,
        c, s);
  }
}
