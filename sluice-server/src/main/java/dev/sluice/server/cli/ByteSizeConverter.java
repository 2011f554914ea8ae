package dev.sluice.server.cli;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Sizes in bytes as operators write them: {@code 1048576}, {@code 512k}, {@code 64m}, {@code 1g}
 * (binary multiples; {@code kb}, {@code mb}, {@code gb}, {@code KiB} ... and upper case too).
 */
final class ByteSizeConverter implements ITypeConverter<Long> {
  private static final Pattern SIZE = Pattern.compile("(\\d{1,19})\\s*([kmgt]?)(i?b)?");

  @Override
  public Long convert(String value) {
    Matcher m = SIZE.matcher(value.trim().toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw new TypeConversionException("'" + value + "' is not a size: write bytes, or a number with k, m or g "
          + "(64m, 1g)");
    }
    int shift = switch (m.group(2)) {
      case "k" -> 10;
      case "m" -> 20;
      case "g" -> 30;
      case "t" -> 40;
      default -> 0;
    };
    long n;
    try {
      n = Long.parseLong(m.group(1));
    } catch (NumberFormatException e) {
      throw new TypeConversionException("'" + value + "' is too large");
    }
    if (n > Long.MAX_VALUE >> shift) {
      throw new TypeConversionException("'" + value + "' is too large");
    }
    if (n == 0) {
      throw new TypeConversionException("'" + value + "' must be at least 1 byte");
    }
    return n << shift;
  }
}
