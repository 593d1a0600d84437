package org.tiledmm;

/** Whether an operand is used as stored or transposed (the CBLAS values). */
public enum Transpose {
  NO_TRANS(111),
  TRANS(112);

  final int value;

  Transpose(int value) {
    this.value = value;
  }
}
