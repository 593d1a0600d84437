// Example: multiply two matrices with tiledmm from C#, in float and in double, check the
// results, print the time.
//
//   MONO_PATH=build/bindings/csharp mono build/examples/csharp/Example.exe [--overhead]
//
// --overhead times repeated calls at 64^3 and 1024^3 (wall clock per call), to compare
// with the same loop in C (sgemm_basic --overhead) and Java (Example --overhead).
using System;
using System.Diagnostics;
using TiledMM;

static class Example
{
    static int Main(string[] args)
    {
        const int m = 300, n = 200, k = 500;
        var random = new Random(42);
        float[] a = new float[m * k], b = new float[k * n], c = new float[m * n];
        for (int i = 0; i < a.Length; i++) a[i] = (float)random.NextDouble() - 0.5f;
        for (int i = 0; i < b.Length; i++) b[i] = (float)random.NextDouble() - 0.5f;

        using (var mm = new Engine())
        {
            mm.Sgemm(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, m, n, k, 1f, a, k, b, n, 0f, c, n);
            double maxError = 0;
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++)
                {
                    double reference = 0;
                    for (int q = 0; q < k; q++) reference += (double)a[i * k + q] * b[q * n + j];
                    maxError = Math.Max(maxError, Math.Abs(reference - c[i * n + j]));
                }
            // The report says which kernel ran, on how many host threads, and where the time went.
            Console.WriteLine($"tiledmm {Engine.Version}: {m}x{n}x{k}, {mm.LastReport}; max error {maxError:E2}");
            if (maxError > 1e-3)
            {
                Console.Error.WriteLine("result is wrong");
                return 1;
            }
            // The same product in double precision: Dgemm takes double[].
            double[] x = Array.ConvertAll(a, v => (double)v), y = Array.ConvertAll(b, v => (double)v);
            var z = new double[m * n];
            mm.Dgemm(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, m, n, k, 1.0, x, k, y, n, 0.0, z, n);
            double maxErrorDouble = 0;
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++)
                {
                    double reference = 0;
                    for (int q = 0; q < k; q++) reference += x[i * k + q] * y[q * n + j];
                    maxErrorDouble = Math.Max(maxErrorDouble, Math.Abs(reference - z[i * n + j]));
                }
            Console.WriteLine($"in double: {mm.LastReport.Precision}; max error {maxErrorDouble:E2}");
            if (maxErrorDouble > 1e-12)
            {
                Console.Error.WriteLine("double result is wrong");
                return 1;
            }
            if (args.Length > 0 && args[0] == "--overhead")
                foreach (int size in new[] { 64, 1024 }) Overhead(mm, size);
        }
        return 0;
    }

    static void Overhead(Engine mm, int size)
    {
        float[] a = new float[size * size], b = new float[size * size], c = new float[size * size];
        for (int i = 0; i < a.Length; i++) { a[i] = 0.5f; b[i] = 0.25f; }
        int calls = size <= 64 ? 20000 : 20;
        for (int i = 0; i < calls / 10 + 1; i++) Run(mm, size, a, b, c);  // warm-up
        var watch = Stopwatch.StartNew();
        for (int i = 0; i < calls; i++) Run(mm, size, a, b, c);
        double us = watch.Elapsed.TotalMilliseconds * 1000.0 / calls;
        Console.WriteLine($"C#    {size,4}^3: {us,10:F2} us per call ({calls} calls)");
    }

    static void Run(Engine mm, int s, float[] a, float[] b, float[] c) =>
        mm.Sgemm(Layout.RowMajor, Transpose.NoTrans, Transpose.NoTrans, s, s, s, 1f, a, s, b, s, 0f, c, s);
}
