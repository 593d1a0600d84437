package org.tiledmm;

/** The library's status codes (never SUCCESS inside an exception). */
public enum Status {
  SUCCESS(0),
  INVALID_VALUE(1),
  NO_DEVICE(2),
  OUT_OF_MEMORY(3),
  NOT_SUPPORTED(4),
  CUDA(5),
  INTERNAL(6);

  final int value;

  Status(int value) {
    this.value = value;
  }

  static Status of(int value) {
    for (Status s : values()) if (s.value == value) return s;
    return INTERNAL;
  }
}
