package dev.sluice.internal.policy;

import dev.sluice.Request;

/**
 * Told of each denied item of a decision the limiter made (degraded decisions excepted), for the
 * top-offenders sketch. Called on the deciding thread: it must be quick and must not throw.
 */
@FunctionalInterface
public interface DenialRecorder {
  /**
   * {@link #denied}'s time when the caller has not read the limiter's ticker: the recorder reads
   * it. The same value as {@link Request#STORE_CLOCK}, which a boolean path hands to the store and
   * then here when the store keeps its own clock.
   */
  long UNREAD = Request.STORE_CLOCK;

  /** Records nothing. */
  DenialRecorder NONE = (rule, key, atMicros) -> {};

  /**
   * Records a denial of {@code key} under {@code rule} at {@code atMicros}, a time just read from
   * the limiter's ticker (a deciding path that read it for the store passes it on), or
   * {@link #UNREAD}.
   */
  void denied(String rule, String key, long atMicros);
}
