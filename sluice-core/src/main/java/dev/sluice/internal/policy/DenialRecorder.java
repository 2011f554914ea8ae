package dev.sluice.internal.policy;


/**
 * Told of each denied item of a decision the limiter made (degraded decisions excepted), for the
 * top-offenders sketch. Called on the deciding thread: it must be quick and must not throw.
 */
@FunctionalInterface
public interface DenialRecorder {
  /** Records nothing. */
  DenialRecorder NONE = (rule, key) -> {};

  void denied(String rule, String key);
}
