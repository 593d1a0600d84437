package org.tiledmm;

/** Where the arithmetic runs. */
public enum Backend {
  /** CUDA when a usable GPU and driver exist, else the CPU. */
  AUTO(0),
  CUDA(1),
  CPU(2);

  final int value;

  Backend(int value) {
    this.value = value;
  }

  static Backend of(int value) {
    for (Backend b : values()) if (b.value == value) return b;
    throw new IllegalStateException("unknown backend " + value);
  }
}
