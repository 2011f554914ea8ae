package dev.sluice.server.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * A TTL on the command line: a whole number of seconds, number-unit parts ({@code 90s},
 * {@code 1h30m}, {@code 500ms}; units ms, s, m, h, d) or ISO-8601 ({@code PT1H}). At least 1 ms.
 */
final class TtlConverter implements ITypeConverter<Duration> {
  private static final Pattern PARTS = Pattern.compile("(?:\\d+(?:ms|s|m|h|d))+");
  private static final Pattern PART = Pattern.compile("(\\d+)(ms|s|m|h|d)");

  @Override
  public Duration convert(String text) {
    Duration d;
    try {
      d = parse(text.trim());
    } catch (ArithmeticException | NumberFormatException | DateTimeParseException e) {
      d = null;
    }
    if (d == null) {
      throw new TypeConversionException("'" + text + "' is not a duration; write e.g. 90s, 10m, 1h30m, 1d, PT1H or "
          + "a number of seconds");
    }
    if (d.toMillis() < 1) {
      throw new TypeConversionException("must be at least 1ms, was '" + text + "'");
    }
    return d;
  }

  private static Duration parse(String text) {
    if (text.matches("\\d+")) {
      return Duration.ofSeconds(Long.parseLong(text));
    }
    if (text.toUpperCase(Locale.ROOT).startsWith("P")) {
      return Duration.parse(text);
    }
    if (!PARTS.matcher(text).matches()) {
      return null;
    }
    Duration d = Duration.ZERO;
    Matcher m = PART.matcher(text);
    while (m.find()) {
      long n = Long.parseLong(m.group(1));
      d = d.plus(switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      });
    }
    return d;
  }
}
