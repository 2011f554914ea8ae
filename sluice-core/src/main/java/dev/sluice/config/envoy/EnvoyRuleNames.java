package dev.sluice.config.envoy;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * Names the Sluice rule of an Envoy descriptor: {@code envoy:<domain>/<key>[:<value>]/...}, e.g.
 * {@code envoy:messaging/message_type:marketing/to_number}. Characters a rule name cannot hold
 * ({@code *}, spaces, ...) become {@code _}, and such a name (or one longer than 128 characters)
 * gets a hash of the exact path appended, so that distinct descriptors never share a rule. Names
 * depend on the path alone, so a reload keeps the state of descriptors that did not change.
 */
final class EnvoyRuleNames {
  private static final Pattern VALID = Pattern.compile("[A-Za-z0-9_.:/-]{1,128}");
  private static final Pattern INVALID_CHAR = Pattern.compile("[^A-Za-z0-9_.:/-]");

  private EnvoyRuleNames() {}

  static String of(String path) {
    String raw = "envoy:" + path;
    if (VALID.matcher(raw).matches()) {
      return raw;
    }
    String clean = INVALID_CHAR.matcher(raw).replaceAll("_");
    String hash = "-" + sha256Hex(raw).substring(0, 12);
    int room = 128 - hash.length();
    return (clean.length() > room ? clean.substring(0, room) : clean) + hash;
  }

  static String sha256Hex(String s) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }
}
