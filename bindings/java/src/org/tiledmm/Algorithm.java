package org.tiledmm;

/** The kernel that computes the product; see the README's algorithm table. */
public enum Algorithm {
  AUTO(0),
  NAIVE(1),
  TILED(2),
  COARSENED(3),
  BLOCKED(4);

  final int value;

  Algorithm(int value) {
    this.value = value;
  }

  static Algorithm of(int value) {
    for (Algorithm a : values()) if (a.value == value) return a;
    throw new IllegalStateException("unknown algorithm " + value);
  }
}
