package dev.sluice.server.envoy;

import dev.sluice.server.config.InvalidConfigException;
import dev.sluice.server.config.YamlNode;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a window period as the native format writes it: seconds as a number, or a duration
 * string ({@code 500ms}, {@code 3s}, {@code 1m}, {@code 1h}, {@code 1d}, ISO-8601 {@code PT1M}).
 */
final class Periods {
  private static final Pattern SIMPLE = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h|d)");

  private Periods() {}

  static Duration parse(YamlNode node, String what) throws InvalidConfigException {
    String text = node.asText(what).trim();
    Duration d;
    try {
      d = node.isNumber() ? seconds(new BigDecimal(text)) : parseText(text);
    } catch (ArithmeticException | NumberFormatException | DateTimeParseException e) {
      d = null;
    }
    if (d == null) {
      throw node.error(what + " must be seconds as a number or a duration such as 500ms, 3s, 1m, 1h, 1d or PT1M, was '"
          + text + "'");
    }
    if (d.isNegative() || d.isZero()) {
      throw node.error(what + " must be > 0, was '" + text + "'");
    }
    if (d.toNanos() % 1_000_000 != 0) {
      throw node.error(what + " must be a whole number of milliseconds, was '" + text + "'");
    }
    return d;
  }

  private static Duration parseText(String text) {
    if (text.toUpperCase(Locale.ROOT).startsWith("PT") || text.toUpperCase(Locale.ROOT).startsWith("P")) {
      return Duration.parse(text);
    }
    Matcher m = SIMPLE.matcher(text);
    if (!m.matches()) {
      return null;
    }
    BigDecimal n = new BigDecimal(m.group(1));
    BigDecimal factor = switch (m.group(2)) {
      case "ms" -> new BigDecimal("0.001");
      case "s" -> BigDecimal.ONE;
      case "m" -> BigDecimal.valueOf(60);
      case "h" -> BigDecimal.valueOf(3600);
      default -> BigDecimal.valueOf(86400);
    };
    return seconds(n.multiply(factor));
  }

  private static Duration seconds(BigDecimal s) {
    BigDecimal nanos = s.movePointRight(9);
    return Duration.ofNanos(nanos.toBigIntegerExact().longValueExact());
  }
}
