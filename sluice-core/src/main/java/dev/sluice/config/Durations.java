package dev.sluice.config;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as configuration writes them: seconds as a number ({@code 60}, {@code 0.5}), a
 * string of number-unit parts ({@code 500ms}, {@code 3s}, {@code 1m30s}) or ISO-8601
 * ({@code PT1M}). Results are exact microseconds: decimal arithmetic, never binary floating point,
 * so {@code 0.1} is 100000 µs and not 99999.
 */
final class Durations {
  /** The longest period or wait accepted: ten years of 365 days. */
  static final long MAX_MICROS = 3650L * 86_400 * 1_000_000;

  static final String SYNTAX = "a number of seconds (60, 0.5) or a duration string such as 500ms, 3s, 1m, "
      + "1h, 1d, 1m30s or PT1M";

  private static final BigDecimal MICROS_PER_SECOND = BigDecimal.valueOf(1_000_000);
  private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(us|µs|ms|s|m|h|d)");

  private Durations() {}

  /**
   * Microseconds in {@code seconds}; {@code what} names the field in messages, which quote the
   * number as {@code written}. (Not as the number's plain form: {@code 1e999999999} has a
   * billion digits.)
   */
  static long ofSeconds(BigDecimal seconds, String what, String written) {
    return exactMicros(seconds.multiply(MICROS_PER_SECOND), what, written);
  }

  /**
   * Microseconds in a duration string; a leading {@code -} is accepted so that the caller can
   * say "must be > 0" rather than "not a duration".
   *
   * @throws IllegalArgumentException naming {@code what} if the text is not a duration
   */
  static long parse(String text, String what) {
    if (text.isEmpty()) {
      throw new IllegalArgumentException(what + " is an empty string; expected " + SYNTAX);
    }
    boolean negative = text.startsWith("-");
    String body = negative || text.startsWith("+") ? text.substring(1) : text;
    if (body.startsWith("P") || body.startsWith("p")) {
      return iso(text, what);
    }
    if (body.matches("\\d+(\\.\\d+)?")) {
      throw new IllegalArgumentException(what + " \"" + text + "\" is a string with no unit; write " + text
          + " unquoted for seconds, or give a unit (" + text + "s, " + text + "ms)");
    }
    BigDecimal micros = BigDecimal.ZERO;
    Matcher m = PART.matcher(body);
    int at = 0;
    while (at < body.length()) {
      m.region(at, body.length());
      if (!m.lookingAt()) {
        throw notADuration(text, what);
      }
      micros = micros.add(new BigDecimal(m.group(1)).multiply(unitMicros(m.group(2))));
      at = m.end();
    }
    return exactMicros(negative ? micros.negate() : micros, what, text);
  }

  private static BigDecimal unitMicros(String unit) {
    return BigDecimal.valueOf(switch (unit) {
      case "us", "µs" -> 1L;
      case "ms" -> 1_000L;
      case "s" -> 1_000_000L;
      case "m" -> 60_000_000L;
      case "h" -> 3_600_000_000L;
      case "d" -> 86_400_000_000L;
      default -> throw new IllegalStateException(unit);
    });
  }

  private static long iso(String text, String what) {
    Duration d;
    try {
      d = Duration.parse(text);
    } catch (DateTimeParseException e) {
      throw notADuration(text, what);
    }
    BigDecimal micros = new BigDecimal(d.getSeconds()).multiply(MICROS_PER_SECOND)
        .add(BigDecimal.valueOf(d.getNano()).divide(BigDecimal.valueOf(1000)));
    return exactMicros(micros, what, text);
  }

  private static long exactMicros(BigDecimal micros, String what, String written) {
    if (micros.compareTo(BigDecimal.valueOf(MAX_MICROS)) > 0) {
      throw new IllegalArgumentException(what + " " + written + " is too long; the maximum is 3650d (ten years)");
    }
    if (micros.compareTo(BigDecimal.valueOf(-MAX_MICROS)) < 0) {
      return -MAX_MICROS;
    }
    if (micros.stripTrailingZeros().scale() > 0) {
      throw new IllegalArgumentException(what + " " + written + " is not a whole number of microseconds");
    }
    return micros.setScale(0, RoundingMode.UNNECESSARY).longValueExact();
  }

  private static IllegalArgumentException notADuration(String text, String what) {
    return new IllegalArgumentException(what + " '" + text + "' is not a duration; expected " + SYNTAX);
  }

  /** A short form for messages: {@code 600s}, {@code 500ms}, {@code 1500us}. */
  static String format(long micros) {
    if (micros % 1_000_000 == 0) {
      return micros / 1_000_000 + "s";
    }
    if (micros % 1_000 == 0) {
      return micros / 1_000 + "ms";
    }
    return micros + "us";
  }
}
