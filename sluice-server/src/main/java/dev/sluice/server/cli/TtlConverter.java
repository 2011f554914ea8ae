package dev.sluice.server.cli;

import dev.sluice.config.ConfigLoader;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * A TTL on the command line, written as configuration files write durations (a number of
 * seconds, {@code 90s}, {@code 1h30m}, {@code PT1H}, ...). At least 1 ms: Redis counts TTLs in
 * milliseconds.
 */
final class TtlConverter implements ITypeConverter<Duration> {
  @Override
  public Duration convert(String text) {
    Duration d;
    try {
      d = ConfigLoader.parseDuration(text, "the value");
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException(e.getMessage());
    }
    if (d.toMillis() < 1) {
      throw new TypeConversionException("must be at least 1ms, was '" + text + "'");
    }
    return d;
  }
}
