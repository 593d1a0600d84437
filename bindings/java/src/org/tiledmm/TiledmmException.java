package org.tiledmm;

/** A call into tiledmm failed; {@link #getStatus()} says how, the message says why. */
public class TiledmmException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final Status status;

  public TiledmmException(Status status, String message) {
    super(message);
    this.status = status;
  }

  /** The library's status code. */
  public Status getStatus() {
    return status;
  }

  /** @deprecated use {@link #getStatus()}; kept for the 1.x series. */
  @Deprecated
  public Status status() {
    return status;
  }
}
