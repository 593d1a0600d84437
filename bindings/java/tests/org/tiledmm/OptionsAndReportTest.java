package org.tiledmm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The 1.1 API on the CPU backend: options (round trip, the library's errors, bounds and
 * names), reserving the host staging, the report of the last product (with the math mode
 * that ran), and the kernel list.
 */
class OptionsAndReportTest {
  @Test
  void optionsStartAtTheirDefaultsAndRoundTrip() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      for (Option option : Option.values()) {
        assertEquals(Engine.getOptionBounds(option).getDefaultValue(), mm.getOption(option),
            option + " starts at its default");
      }
      mm.setOption(Option.HOST_THREADS, 4);
      assertEquals(4, mm.getOption(Option.HOST_THREADS));
      mm.setOption(Option.HOST_THREADS, 0);
      assertEquals(0, mm.getOption(Option.HOST_THREADS));
      // The typed setters of 1.0 are the same settings as their options.
      mm.setOption(Option.ALGORITHM, Algorithm.NAIVE.value);
      assertEquals(Algorithm.NAIVE, mm.getAlgorithm());
      mm.setAlgorithm(Algorithm.BLOCKED);
      assertEquals(Algorithm.BLOCKED.value, mm.getOption(Option.ALGORITHM));
      mm.setOption(Option.TILE_SIZE, 16);
      assertEquals(16, mm.getTileSize());
      mm.setCoarsening(4);
      assertEquals(4, mm.getOption(Option.COARSENING));
    }
  }

  @Test
  void badOptionValuesRaiseTheLibrarysMessage() {
    OptionBounds bounds = Engine.getOptionBounds(Option.HOST_THREADS);
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      mm.setOption(Option.HOST_THREADS, 3);
      for (long bad : new long[] {bounds.getLower() - 1, bounds.getUpper() + 1, Long.MIN_VALUE}) {
        TiledmmException e = assertThrows(TiledmmException.class,
            () -> mm.setOption(Option.HOST_THREADS, bad), "host_threads " + bad);
        assertEquals(Status.INVALID_VALUE, e.getStatus());
        String expected = "host_threads must be in [" + bounds.getLower() + ", "
            + bounds.getUpper() + "] (got " + bad + ")";
        assertTrue(e.getMessage().contains(expected), e.getMessage());
        assertEquals(3, mm.getOption(Option.HOST_THREADS), "the setting is unchanged");
      }
      TiledmmException e = assertThrows(TiledmmException.class,
          () -> mm.setOption(Option.TILE_SIZE, 7));
      assertEquals(Status.INVALID_VALUE, e.getStatus());
      assertTrue(e.getMessage().contains("tile size"), e.getMessage());
      e = assertThrows(TiledmmException.class,
          () -> mm.setOption(Option.ALGORITHM, Algorithm.TILED.value));
      assertEquals(Status.NOT_SUPPORTED, e.getStatus());
      assertEquals(Algorithm.AUTO, mm.getAlgorithm());
    }
  }

  @Test
  void nullAndUnknownArgumentsAreRejectedBeforeNativeCode() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      assertThrows(IllegalArgumentException.class, () -> mm.setOption(null, 1));
      assertThrows(IllegalArgumentException.class, () -> mm.getOption(null));
      assertThrows(IllegalArgumentException.class, () -> Engine.getOptionBounds(null));
      assertThrows(IllegalArgumentException.class, () -> Engine.getOptionName(null));
      assertThrows(IllegalArgumentException.class, () -> mm.setAlgorithm(null));
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> mm.setAlgorithm(Algorithm.UNKNOWN));
      assertTrue(e.getMessage().contains("Algorithm.UNKNOWN"), e.getMessage());
      assertEquals(Algorithm.AUTO, mm.getAlgorithm());
    }
    long created = Engine.nativeHandlesCreated();
    assertThrows(IllegalArgumentException.class, () -> new Engine(Backend.UNKNOWN, 0));
    assertThrows(IllegalArgumentException.class, () -> new Engine(null, 0));
    assertEquals(created, Engine.nativeHandlesCreated(), "no handle was created");
    Engine closed = new Engine(Backend.CPU, 0);
    closed.close();
    assertThrows(IllegalStateException.class, () -> closed.setOption(Option.HOST_THREADS, 1));
    assertThrows(IllegalStateException.class, () -> closed.getOption(Option.HOST_THREADS));
    assertThrows(IllegalStateException.class, closed::getLastReport);
  }

  @Test
  void reserveHostStagingOnTheCpu() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      // The CPU backend has no staging: sizes within the budget are a no-op.
      mm.reserveHostStaging(0);
      mm.reserveHostStaging(1 << 20);
      for (long bad : new long[] {-1, Long.MIN_VALUE}) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> mm.reserveHostStaging(bad), "bytes " + bad);
        assertTrue(e.getMessage().contains(Long.toString(bad)), e.getMessage());
      }
      // More than the budget (HOST_STAGING_BYTES) is the library's INVALID_VALUE.
      mm.setOption(Option.HOST_STAGING_BYTES, 1 << 20);
      mm.reserveHostStaging(1 << 20);
      mm.reserveHostStaging(0);
      TiledmmException e = assertThrows(TiledmmException.class,
          () -> mm.reserveHostStaging((1 << 20) + 1));
      assertEquals(Status.INVALID_VALUE, e.getStatus());
      assertEquals(1 << 20, mm.getOption(Option.HOST_STAGING_BYTES), "the budget is unchanged");
      mm.reserveHostStaging(1 << 20);  // the engine works on
    }
    Engine closed = new Engine(Backend.CPU, 0);
    closed.close();
    assertThrows(IllegalStateException.class, () -> closed.reserveHostStaging(0));
  }

  @Test
  void boundsAndNames() {
    for (Option option : Option.values()) {
      OptionBounds b = Engine.getOptionBounds(option);
      assertSame(option, b.getOption());
      assertTrue(b.getLower() <= b.getDefaultValue() && b.getDefaultValue() <= b.getUpper(),
          b.toString());
      assertTrue(b.contains(b.getDefaultValue()) && !b.contains(b.getUpper() + 1), b.toString());
      // The library names each option after its enumerator: TMM_OPTION_HOST_THREADS.
      assertEquals(option.name().toLowerCase(Locale.ROOT), Engine.getOptionName(option));
    }
    OptionBounds threads = Engine.getOptionBounds(Option.HOST_THREADS);
    assertEquals(0, threads.getLower());
    assertEquals(0, threads.getDefaultValue());
    assertTrue(threads.getUpper() >= 64, threads.toString());
    OptionBounds algorithms = Engine.getOptionBounds(Option.ALGORITHM);
    for (Algorithm a : Algorithm.values()) {
      if (a != Algorithm.UNKNOWN) assertTrue(algorithms.contains(a.value), a + " in " + algorithms);
    }
    assertEquals(Algorithm.AUTO.value, algorithms.getDefaultValue());
    OptionBounds tiles = Engine.getOptionBounds(Option.TILE_SIZE);
    for (KernelInfo k : Engine.getKernels()) {
      assertTrue(tiles.contains(k.getTileSize()), k + " in " + tiles);
    }
  }

  /** A product large enough (4 row blocks, 8 MFLOP) for the CPU to use several threads. */
  private static EngineTest.Case product() {
    return new EngineTest.Case(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, 256,
        128, 128, 1f, 0f, 0, 0);
  }

  @Test
  void reportAfterAProduct() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      TiledmmException none = assertThrows(TiledmmException.class, mm::getLastReport);
      assertEquals(Status.INVALID_VALUE, none.getStatus());

      mm.setOption(Option.HOST_THREADS, 2);
      EngineTest.Case g = product();
      g.run(mm);
      g.verify();
      Report r = mm.getLastReport();
      assertEquals("cpu_blocked", r.getKernel());
      assertEquals(Backend.CPU, r.getBackend());
      assertEquals(-1, r.getDevice());
      assertEquals(Algorithm.BLOCKED, r.getAlgorithm());
      assertEquals(2, r.getHostThreads(), "host_threads is honoured");
      assertEquals(1, r.getSplits());
      assertEquals(HostPath.AUTO, r.getHostPath(), "the CPU takes no host path");
      assertEquals(1, r.getTiles());
      assertEquals(1, r.getKChunks());
      assertEquals(0, r.getLinkMs());
      assertEquals(0, r.getUploadMs());
      assertEquals(0, r.getDownloadMs());
      assertTrue(r.getComputeMs() >= 0 && r.getTotalMs() >= r.getComputeMs(), r.toString());
      Timing t = mm.getLastTiming();
      assertEquals(t.getAlgorithm(), r.getAlgorithm());
      assertEquals(t.getTileSize(), r.getTileSize());
      assertEquals(t.getCoarsening(), r.getCoarsening());
      assertTrue(r.toString().startsWith("cpu_blocked on CPU"), r.toString());
      assertEquals(MathMode.FP32, r.getMathMode(), "the CPU runs strict FP32");
      assertEquals(Precision.SINGLE, r.getPrecision());
      assertTrue(r.toString().contains("(BLOCKED, FP32"), r.toString());

      mm.setOption(Option.HOST_THREADS, 1);
      product().run(mm);
      assertEquals(1, mm.getLastReport().getHostThreads());

      mm.setAlgorithm(Algorithm.NAIVE);
      product().run(mm);
      r = mm.getLastReport();
      assertEquals("cpu_naive", r.getKernel());
      assertEquals(Algorithm.NAIVE, r.getAlgorithm());
      assertEquals(MathMode.FP32, r.getMathMode());

      // Products that run no multiplication kernel say so, and ran strict FP32.
      new EngineTest.Case(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, 8, 8, 8,
          0f, 2f, 0, 0).run(mm);  // alpha = 0: C = beta * C
      assertTrue(mm.getLastReport().getKernel().endsWith("scale"), mm.getLastReport().toString());
      assertEquals(MathMode.FP32, mm.getLastReport().getMathMode());
      new EngineTest.Case(Layout.ROW_MAJOR, Transpose.NO_TRANS, Transpose.NO_TRANS, 0, 8, 8, 1f,
          0f, 0, 0).run(mm);  // m = 0: nothing
      assertEquals("none", mm.getLastReport().getKernel());
      assertEquals(MathMode.FP32, mm.getLastReport().getMathMode());
    }
  }

  @Test
  void mathModeIsWhatRanNotWhatWasAllowed() {
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      mm.setAlgorithm(Algorithm.BLOCKED);  // the own kernels: AUTO may run the system BLAS
      product().run(mm);
      assertEquals(MathMode.FP32, mm.getLastReport().getMathMode(), "a default engine");
      // A math mode is a permission, not a demand: the CPU backend takes every mode, has
      // no tensor-core kernel, and runs (and reports) strict FP32.
      for (MathMode allowed : new MathMode[] {MathMode.TF32, MathMode.FP32_ACCURATE}) {
        mm.setOption(Option.MATH_MODE, allowed.value);
        assertEquals(allowed.value, mm.getOption(Option.MATH_MODE), "the setting holds");
        EngineTest.Case g = product();
        g.run(mm);
        g.verify();
        Report r = mm.getLastReport();
        assertEquals("cpu_blocked", r.getKernel());
        assertEquals(MathMode.FP32, r.getMathMode(), allowed + " allowed: " + r);
      }
      mm.setOption(Option.MATH_MODE, MathMode.FP32.value);
      assertEquals(MathMode.FP32.value, mm.getOption(Option.MATH_MODE));
    }
  }

  @Test
  void kernelList() {
    List<KernelInfo> kernels = Engine.getKernels();
    assertSame(kernels, Engine.getKernels(), "read once");
    assertThrows(UnsupportedOperationException.class, () -> kernels.add(kernels.get(0)));
    Set<String> names = new HashSet<>();
    Set<String> defaults = new HashSet<>();
    for (KernelInfo k : kernels) {
      assertTrue(names.add(k.getName()), "unique name " + k.getName());
      assertTrue(k.getDescription() != null && !k.getDescription().isEmpty(), k.toString());
      assertTrue(k.getBackend() == Backend.CPU || k.getBackend() == Backend.CUDA, k.toString());
      assertNotEquals(Algorithm.AUTO, k.getAlgorithm());
      assertNotEquals(Algorithm.UNKNOWN, k.getAlgorithm());
      assertTrue(k.getMinComputeCapability() <= k.getMaxComputeCapability(), k.toString());
      assertNotEquals(MathMode.UNKNOWN, k.getMathMode(), k.toString());
      assertNotEquals(Precision.UNKNOWN, k.getPrecision(), k.toString());
      if (k.getBackend() == Backend.CPU) {
        assertEquals(MathMode.FP32, k.getMathMode(), "the CPU has strict FP32 only: " + k);
      }
      if (k.getMathMode() != MathMode.FP32) {  // tensor cores: BLOCKED (and AUTO) only
        assertEquals(Algorithm.BLOCKED, k.getAlgorithm(), k.toString());
      }
      if (k.isDefault()) {
        assertTrue(defaults.add(k.getBackend() + " " + k.getPrecision() + " " + k.getAlgorithm()),
            "one default " + k);
      }
    }
    assertTrue(names.contains("cpu_naive") && names.contains("cpu_blocked"), names.toString());
    if (kernels.stream().anyMatch(k -> k.getBackend() == Backend.CUDA)) {  // a CUDA build
      for (String cuda : new String[] {"naive_16", "tiled_32", "blocked_128x256"}) {
        assertTrue(names.contains(cuda), cuda + " in " + names);
      }
      KernelInfo wide = kernels.stream().filter(k -> k.getName().equals("blocked_128x256"))
                            .findFirst().get();
      assertEquals(128, wide.getOutputsPerThread(), "16 x 8 outputs per thread");
      assertEquals(MathMode.FP32, wide.getMathMode());
      // Each math mode has a kernel among the CUDA rows.
      Set<MathMode> modes = EnumSet.noneOf(MathMode.class);
      for (KernelInfo k : kernels) {
        if (k.getBackend() == Backend.CUDA) modes.add(k.getMathMode());
      }
      for (MathMode mode : new MathMode[] {MathMode.FP32, MathMode.TF32, MathMode.FP32_ACCURATE}) {
        assertTrue(modes.contains(mode), mode + " in " + modes);
      }
    }
    // Each single-precision CPU kernel runs when its settings are chosen (the products of
    // this binding are float ones), and the report names it.
    try (Engine mm = new Engine(Backend.CPU, 0)) {
      for (KernelInfo k : kernels) {
        if (k.getBackend() != Backend.CPU || k.getPrecision() != Precision.SINGLE) continue;
        mm.setAlgorithm(k.getAlgorithm());
        mm.setTileSize(k.getTileSize());
        product().run(mm);
        assertEquals(k.getName(), mm.getLastReport().getKernel());
        assertEquals(k.getMathMode(), mm.getLastReport().getMathMode(), k.getName());
      }
    }
  }

  @Test
  void valuesTheBindingsDoNotKnowReadAsUnknown() {
    // A newer library may return values these bindings were not generated with.
    assertEquals(Status.UNKNOWN, Status.of(99));
    assertEquals(Algorithm.UNKNOWN, Algorithm.of(42));
    assertEquals(Backend.UNKNOWN, Backend.of(-7));
    assertEquals(MathMode.UNKNOWN, MathMode.of(42));
    assertEquals(MathMode.TF32, MathMode.of(1));
    assertEquals(Algorithm.BLOCKED, Algorithm.of(4));
    TiledmmException e = Engine.error(99, "");
    assertEquals(Status.UNKNOWN, e.getStatus());
    assertTrue(e.getMessage().contains("unknown"), e.getMessage());
    // The enums only passed to the library have no UNKNOWN; of() rejects other numbers.
    assertThrows(IllegalArgumentException.class, () -> Layout.of(7));
    assertEquals(Option.HOST_THREADS, Option.of(Option.HOST_THREADS.value));
  }
}
