package dev.sluice.internal;

import java.util.concurrent.RejectedExecutionException;

/**
 * The store was not called because {@code maxInFlight} calls already waited for its answer.
 * Thrown at the rate of a saturated limiter, so it carries no stack trace: the message says all.
 */
final class StoreOverloadedException extends RejectedExecutionException {
  private static final long serialVersionUID = 1L;

  StoreOverloadedException(int maxInFlight) {
    super(maxInFlight + " store calls are already waiting for an answer (maxInFlight); failure modes decided without"
        + " calling the store");
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this;
  }
}
