package dev.sluice.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The admin endpoints of a running service, for the policy commands. Exit codes: 0 done; 1 not
 * found; 2 a mistake in what was given (the service's 4xx, named in its words); 3 the service
 * could not be reached or could not answer (a 5xx).
 */
final class AdminClient {
  static final int EXIT_NOT_FOUND = 1;
  static final int EXIT_BAD_INPUT = Main.EXIT_ERRORS;
  static final int EXIT_UNREACHABLE = 3;
  static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private final URI base;
  private final String token;
  private final HttpClient http;

  AdminClient(AdminOptions o) {
    String u = o.url.endsWith("/") ? o.url.substring(0, o.url.length() - 1) : o.url;
    try {
      base = new URI(u);
    } catch (URISyntaxException e) {
      throw new CliException("sluice: --url '" + u + "' is not a URL such as http://127.0.0.1:8080", EXIT_BAD_INPUT);
    }
    if (!"http".equals(base.getScheme()) && !"https".equals(base.getScheme()) || base.getHost() == null) {
      throw new CliException("sluice: --url '" + u + "' is not an http:// or https:// URL with a host", EXIT_BAD_INPUT);
    }
    token = o.adminToken == null || o.adminToken.isEmpty() ? null : o.adminToken;
    http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
  }

  /** A path segment percent-encoded: a {@code /} in a key is {@code %2F}. */
  static String segment(String s) {
    StringBuilder b = new StringBuilder();
    for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
      int c = x & 0xff;
      if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || "-._~:@".indexOf(c) >= 0) {
        b.append((char) c);
      } else {
        b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
      }
    }
    return b.toString();
  }

  /** A query parameter's value encoded. */
  static String query(String s) {
    return java.net.URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  /**
   * Calls the service; the JSON answer, or null for 204.
   *
   * @throws CliException with the exit code of the failure, and the service's message
   */
  JsonNode call(String method, String pathAndQuery, String body) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + pathAndQuery)).timeout(TIMEOUT)
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (body != null) {
      b.header("content-type", "application/json");
    }
    if (token != null) {
      b.header("authorization", "Bearer " + token);
    }
    HttpResponse<String> r;
    try {
      r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    } catch (ConnectException e) {
      throw new CliException("sluice: cannot reach the service at " + base + ": connection refused", EXIT_UNREACHABLE);
    } catch (HttpTimeoutException e) {
      throw new CliException("sluice: the service at " + base + " did not answer within " + TIMEOUT.toSeconds() + " s",
          EXIT_UNREACHABLE);
    } catch (IOException e) {
      throw new CliException("sluice: cannot reach the service at " + base + ": "
          + (e.getMessage() == null ? "connection failed" : e.getMessage()), EXIT_UNREACHABLE);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("sluice: interrupted", EXIT_UNREACHABLE);
    }
    int s = r.statusCode();
    if (s == 204) {
      return null;
    }
    JsonNode json;
    try {
      json = JSON.readTree(r.body());
    } catch (IOException e) {
      json = null;
    }
    if (s >= 200 && s < 300 && json != null) {
      return json;
    }
    JsonNode error = json == null ? null : json.get("error");
    String message = error == null ? "HTTP " + s
        : error.path("code").asText() + ": " + error.path("message").asText();
    int exit = s == 404 ? EXIT_NOT_FOUND : s >= 400 && s < 500 ? EXIT_BAD_INPUT : EXIT_UNREACHABLE;
    throw new CliException("sluice: " + message, exit);
  }

  /** Prints rows under a header, in columns; a cell's control characters as '?'. */
  static void table(PrintWriter out, List<String> header, List<List<String>> rows) {
    List<List<String>> all = new ArrayList<>();
    all.add(header);
    for (List<String> row : rows) {
      all.add(row.stream().map(AdminClient::printable).toList());
    }
    int[] width = new int[header.size()];
    for (List<String> row : all) {
      for (int i = 0; i < row.size(); i++) {
        width[i] = Math.max(width[i], row.get(i).length());
      }
    }
    for (List<String> row : all) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < row.size(); i++) {
        line.append(row.get(i));
        if (i < row.size() - 1) {
          line.append(" ".repeat(width[i] - row.get(i).length() + 2));
        }
      }
      out.println(line);
    }
  }

  static String printable(String s) {
    StringBuilder b = new StringBuilder(s.length());
    s.codePoints().forEach(c -> b.appendCodePoint(Character.isISOControl(c) || c == 0x2028 || c == 0x2029 ? '?' : c));
    return b.toString();
  }

  /** Prints a JSON answer as it came, on one line. */
  static void printJson(PrintWriter out, JsonNode n) {
    out.println(n.toString());
  }
}
