package org.tiledmm;

/** Storage order of a matrix (the CBLAS values). */
public enum Layout {
  ROW_MAJOR(101),
  COL_MAJOR(102);

  final int value;

  Layout(int value) {
    this.value = value;
  }
}
