package org.tiledmm;

/**
 * The values an {@link Option} takes and its default ({@link Engine#getOptionBounds}).
 * Some options take only some values between the bounds (tile sizes: those of the
 * kernels, {@link Engine#getKernels()}).
 */
public final class OptionBounds {
  private final Option option;
  private final long lower;
  private final long upper;
  private final long defaultValue;

  OptionBounds(Option option, long lower, long upper, long defaultValue) {
    this.option = option;
    this.lower = lower;
    this.upper = upper;
    this.defaultValue = defaultValue;
  }

  /** The option these bounds are of. */
  public Option getOption() {
    return option;
  }

  /** The smallest value the option takes. */
  public long getLower() {
    return lower;
  }

  /** The largest value the option takes. */
  public long getUpper() {
    return upper;
  }

  /** The value a new engine has. */
  public long getDefaultValue() {
    return defaultValue;
  }

  /** Whether {@code value} lies within the bounds (inclusive). */
  public boolean contains(long value) {
    return value >= lower && value <= upper;
  }

  @Override
  public String toString() {
    return String.format("%s in [%d, %d], default %d", option, lower, upper, defaultValue);
  }
}
