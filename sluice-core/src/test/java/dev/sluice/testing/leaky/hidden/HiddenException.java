package dev.sluice.testing.leaky.hidden;

/** A type of the fixture's internal package. */
public final class HiddenException extends Exception {
  private static final long serialVersionUID = 1L;
}
