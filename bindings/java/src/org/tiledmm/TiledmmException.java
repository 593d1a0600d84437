package org.tiledmm;

/** A call into tiledmm failed; {@link #status()} says how, the message says why. */
public class TiledmmException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final Status status;

  public TiledmmException(Status status, String message) {
    super(message);
    this.status = status;
  }

  /** The library's status code. */
  public Status status() {
    return status;
  }
}
