package org.tiledmm;

/**
 * The 1.0 name of {@link Engine}, with the 1.0 names of its methods.
 *
 * @deprecated use {@link Engine}; this class and its methods remain for the 1.x series
 *     and go in 2.0. Each method says which {@link Engine} method replaces it.
 */
@Deprecated
public final class Tiledmm extends Engine {
  /** @deprecated use {@link Engine#Engine()}. */
  @Deprecated
  public Tiledmm() {
    super();
  }

  /** @deprecated use {@link Engine#Engine(Backend, int)}. */
  @Deprecated
  public Tiledmm(Backend backend, int device) {
    super(backend, device);
  }

  /** @deprecated use {@link Engine#getVersion()}. */
  @Deprecated
  public static int version() {
    return getVersion();
  }

  /** @deprecated use {@link Engine#getBindingVersion()}. */
  @Deprecated
  public static int bindingVersion() {
    return getBindingVersion();
  }

  /** @deprecated use {@link Engine#getBackend()}. */
  @Deprecated
  public Backend backend() {
    return getBackend();
  }

  /** @deprecated use {@link Engine#getLastTime()}. */
  @Deprecated
  public double lastTime() {
    return getLastTime();
  }

  /** @deprecated use {@link Engine#getLastTiming()}. */
  @Deprecated
  public Timing lastTiming() {
    return getLastTiming();
  }

  /** @deprecated use {@link Engine#getDeviceInfo()}. */
  @Deprecated
  public DeviceInfo deviceInfo() {
    return getDeviceInfo();
  }
}
