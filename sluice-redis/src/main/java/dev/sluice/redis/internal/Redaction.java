package dev.sluice.redis.internal;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/**
 * Passwords out of what is shown: every message of Sluice that names a Redis URI (the store's
 * errors, the service's and the command line's) shows it through {@link #uri}, and a driver's
 * message through {@link #message}, so a password is never logged or printed.
 */
public final class Redaction {
  private Redaction() {}

  /**
   * {@code uri} with the password of its user info replaced by {@code ***} and all else as
   * written: {@code redis://user:***@h:6379/0}, {@code redis://:***@h}, and {@code rediss://***@h}
   * where the user info is a password alone (as Redis' {@code AUTH <password>} takes it). A spec
   * without a scheme ({@code user:pw@host}) is redacted the same way.
   */
  public static String uri(String uri) {
    int start = userInfoStart(uri);
    int at = uri.lastIndexOf('@');
    if (at < start) {
      return uri;
    }
    String userInfo = uri.substring(start, at);
    int colon = userInfo.indexOf(':');
    return uri.substring(0, start) + (colon < 0 ? "***" : userInfo.substring(0, colon + 1) + "***")
        + uri.substring(at);
  }

  /**
   * {@code message} with the password of {@code uri} replaced by {@code ***}, as written in the
   * URI and percent-decoded: for a driver's message, which may echo what it was given.
   */
  public static String message(String message, String uri) {
    String password = password(uri);
    if (password.isEmpty()) {
      return message;
    }
    String m = message.replace(password, "***");
    try {
      String decoded = URLDecoder.decode(password, StandardCharsets.UTF_8);
      return decoded.isEmpty() ? m : m.replace(decoded, "***");
    } catch (IllegalArgumentException notEncoded) {
      return m;
    }
  }

  /** The password of {@code uri}'s user info, or "". */
  private static String password(String uri) {
    int start = userInfoStart(uri);
    int at = uri.lastIndexOf('@');
    if (at < start) {
      return "";
    }
    String userInfo = uri.substring(start, at);
    int colon = userInfo.indexOf(':');
    return colon < 0 ? userInfo : userInfo.substring(colon + 1);
  }

  private static int userInfoStart(String uri) {
    int scheme = uri.indexOf("://");
    return scheme < 0 ? 0 : scheme + 3;
  }
}
