package dev.sluice.server.http;

import com.linecorp.armeria.server.ServiceRequestContext;
import dev.sluice.server.PathEscapes;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** The segments of an admin path, percent-decoded one by one. */
final class PathSegments {
  private PathSegments() {}

  /**
   * The {@code n} percent-decoded segments of the path after {@code prefix}. The raw path is
   * split before decoding, so {@code %2F} is a {@code /} inside a segment. The path is the one
   * the client sent, also when it had a malformed escape that the server let through
   * ({@link PathEscapes}); a segment's malformed escape is refused naming the
   * segment ({@code shape}'s {@code {rule}}, {@code {key}}, {@code {entry}}) and the escape.
   */
  /** How many segments follow {@code prefix} in the request's path (the path is under it). */
  static int count(ServiceRequestContext ctx, String prefix) {
    String raw = rawPath(ctx);
    return raw.startsWith(prefix) ? raw.substring(prefix.length()).split("/", -1).length : 0;
  }

  private static String rawPath(ServiceRequestContext ctx) {
    String sent = ctx.request().headers().get(PathEscapes.RAW_PATH);
    String raw = sent != null ? sent : ctx.rawPath();
    int q = raw.indexOf('?');
    return q >= 0 ? raw.substring(0, q) : raw;
  }

  static List<String> of(ServiceRequestContext ctx, String prefix, int n, String shape) throws ApiException {
    String raw = rawPath(ctx);
    if (!raw.startsWith(prefix)) {
      throw new ApiException(404, "not_found", "expected " + shape);
    }
    String[] parts = raw.substring(prefix.length()).split("/", -1);
    if (parts.length != n) {
      throw new ApiException(404, "not_found", "expected " + shape + " (a '/' inside a key or entry is written %2F)");
    }
    List<String> names = new ArrayList<>();
    for (String s : shape.split("/")) {
      if (s.startsWith("{")) {
        names.add(s.substring(1, s.length() - 1));
      }
    }
    List<String> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(decoded(parts[i], i < names.size() ? names.get(i) : "key"));
    }
    return out;
  }

  /**
   * {@code s} with its {@code %XX} escapes decoded as UTF-8; {@code +} is itself, as in any path.
   *
   * @param what the segment's name in errors: {@code rule} (refused as {@code invalid_rule}),
   *     {@code key}, {@code entry}, or another ({@code invalid_request})
   */
  static String decoded(String s, String what) throws ApiException {
    if (s.indexOf('%') < 0) {
      return s;
    }
    String code = switch (what) {
      case "rule" -> "invalid_rule";
      case "key" -> "invalid_key";
      case "entry" -> "invalid_entry";
      default -> "invalid_request";
    };
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%') {
        int hi = i + 2 < s.length() ? Character.digit(s.charAt(i + 1), 16) : -1;
        int lo = hi >= 0 ? Character.digit(s.charAt(i + 2), 16) : -1;
        if (lo < 0) {
          String escape = clip(s.substring(i, Math.min(s.length(), i + 3)));
          throw ApiException.badRequest(code, "the " + what + " in the path has a malformed %-escape '" + escape
              + "' at character " + (i + 1) + " of '" + clip(s) + "': '%' must be followed by two hex digits "
              + "(a '%' itself is written %25)");
        }
        bytes.write(hi * 16 + lo);
        i += 2;
      } else {
        byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
        bytes.write(b, 0, b.length);
      }
    }
    try {
      return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes.toByteArray())).toString();
    } catch (CharacterCodingException e) {
      throw ApiException.badRequest(code, "the " + what + " in the path, '" + clip(s)
          + "', is not valid UTF-8 once its %-escapes are decoded");
    }
  }

  private static String clip(String s) {
    return RequestJson.clip(s);
  }
}
