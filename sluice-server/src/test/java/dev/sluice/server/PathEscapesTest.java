package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A malformed percent-escape in an admin path ({@code %ZZ}, {@code %2}, a trailing {@code %})
 * is refused naming the segment and the escape: {@code invalid_key}, {@code invalid_rule} or
 * {@code invalid_entry}, over HTTP/1.1 and HTTP/2. Before, the server refused such a path before
 * routing: {@code 400 bad_request "bad request"}, and closed the HTTP/1.1 connection.
 */
class PathEscapesTest {
  static final String RULE = "open.rule";

  @TempDir
  Path dir;
  SluiceService service;

  @BeforeEach
  void start() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), ServiceFailureTest.RULES);
    service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withDrainTimeout(Duration.ofSeconds(1)), dev.sluice.memory.MemoryStore.create());
  }

  @AfterEach
  void stop() {
    service.close();
  }

  record Answer(int status, String body) {
    JsonNode error() throws Exception {
      return ServiceClient.JSON.readTree(body).get("error");
    }
  }

  /** One HTTP/1.1 request on its own connection, the path written as given. */
  private Answer http1(String method, String path, String body, String... headers) throws Exception {
    try (Socket s = new Socket("127.0.0.1", service.port())) {
      s.setSoTimeout(10_000);
      StringBuilder req = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
          + "Connection: close\r\n");
      for (String h : headers) {
        req.append(h).append("\r\n");
      }
      byte[] b = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
      if (body != null) {
        req.append("Content-Type: application/json\r\nContent-Length: ").append(b.length).append("\r\n");
      }
      req.append("\r\n");
      OutputStream out = s.getOutputStream();
      out.write(req.toString().getBytes(StandardCharsets.UTF_8));
      out.write(b);
      out.flush();
      // Read up to the end of the body its Content-Length gives, not to the end of the connection.
      InputStream in = s.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      int length = -1;
      int headEnd = -1;
      while (headEnd < 0 || all.size() < headEnd + length) {
        int c = in.read();
        if (c < 0) {
          break;
        }
        all.write(c);
        if (headEnd < 0 && all.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
          String head = all.toString(StandardCharsets.ISO_8859_1).toLowerCase(java.util.Locale.ROOT);
          int at = head.indexOf("content-length:");
          length = at < 0 ? 0 : Integer.parseInt(head.substring(at + 15, head.indexOf("\r\n", at)).strip());
          headEnd = all.size();
        }
      }
      String text = all.toString(StandardCharsets.UTF_8);
      int status = Integer.parseInt(text.substring(9, 12));
      return new Answer(status, text.substring(text.indexOf("\r\n\r\n") + 4));
    }
  }

  private static String malformed(String what, String escape, int at, String segment) {
    return "the " + what + " in the path has a malformed %-escape '" + escape + "' at character " + at + " of '"
        + segment + "': '%' must be followed by two hex digits (a '%' itself is written %25)";
  }

  private void refused(Answer a, String code, String message) throws Exception {
    assertThat(a.status()).as(a.body()).isEqualTo(400);
    assertThat(a.error().get("code").asText()).isEqualTo(code);
    assertThat(a.error().get("message").asText()).isEqualTo(message);
  }

  @Test
  void aMalformedEscapeInAKeyIsAnInvalidKeyNamingTheEscapeOnEveryAdminRoute() throws Exception {
    String limit = "{\"windows\":[{\"limit\":10,\"period\":\"1m\"}]}";
    String ban = "{\"for\":\"1m\"}";
    for (String[] k : new String[][] {{"a%ZZ", "%ZZ", "2"}, {"a%2", "%2", "2"}, {"a%", "%", "2"},
        {"user%4", "%4", "5"}}) {
      String message = malformed("key", k[1], Integer.parseInt(k[2]), k[0]);
      refused(http1("PUT", "/v1/limits/" + RULE + "/" + k[0], limit), "invalid_key", message);
      refused(http1("GET", "/v1/limits/" + RULE + "/" + k[0], null), "invalid_key", message);
      refused(http1("DELETE", "/v1/limits/" + RULE + "/" + k[0], null), "invalid_key", message);
      refused(http1("PUT", "/v1/bans/" + RULE + "/" + k[0], ban), "invalid_key", message);
      refused(http1("GET", "/v1/bans/" + RULE + "/" + k[0], null), "invalid_key", message);
      refused(http1("DELETE", "/v1/bans/" + RULE + "/" + k[0], null), "invalid_key", message);
      refused(http1("GET", "/v1/audit/" + RULE + "/" + k[0], null), "invalid_key", message);
      refused(http1("PUT", "/v1/lists/deny/" + RULE + "/" + k[0], null), "invalid_entry",
          malformed("entry", k[1], Integer.parseInt(k[2]), k[0]));
      refused(http1("DELETE", "/v1/lists/allow/" + RULE + "/" + k[0], null), "invalid_entry",
          malformed("entry", k[1], Integer.parseInt(k[2]), k[0]));
    }
    // Nothing was set.
    assertThat(http1("GET", "/v1/limits", null).body()).isEqualTo("{\"items\":[],\"next\":null}");
  }

  @Test
  void aMalformedEscapeInARuleIsAnInvalidRule() throws Exception {
    refused(http1("GET", "/v1/limits/open%ZZ/k", null), "invalid_rule", malformed("rule", "%ZZ", 5, "open%ZZ"));
    refused(http1("PUT", "/v1/bans/open%/k", "{\"for\":\"1m\"}"), "invalid_rule", malformed("rule", "%", 5, "open%"));
    refused(http1("GET", "/v1/lists/deny/r%2", null), "invalid_rule", malformed("rule", "%2", 2, "r%2"));
    refused(http1("GET", "/v1/audit/%G1/k", null), "invalid_rule", malformed("rule", "%G1", 1, "%G1"));
  }

  @Test
  void wellFormedEscapesAndTheQueryAreUntouchedAndTheHeaderCannotBeSent() throws Exception {
    Answer set = http1("PUT", "/v1/limits/" + RULE + "/a%25ZZ", "{\"windows\":[{\"limit\":10,\"period\":\"1m\"}]}",
        PathEscapesTestHeader.spoof("/v1/limits/" + RULE + "/a%ZZ"));
    assertThat(set.status()).as(set.body()).isEqualTo(200);
    assertThat(ServiceClient.JSON.readTree(set.body()).get("key").asText()).isEqualTo("a%ZZ");
    assertThat(http1("GET", "/v1/limits?rule=" + RULE + "&count=5", null).body()).contains("\"key\":\"a%ZZ\"");
    // Outside the admin paths a malformed escape is a path that does not exist.
    Answer other = http1("GET", "/v1/rules%ZZ", null);
    assertThat(other.status()).isEqualTo(404);
    assertThat(other.error().get("code").asText()).isEqualTo("not_found");
  }

  @Test
  void overHttp2TooAndTheConnectionGoesOn() throws Exception {
    try (RawHttp2 h2 = new RawHttp2(service.port())) {
      RawHttp2.Answer a = h2.request("GET", "/v1/bans/" + RULE + "/a%ZZ", null, null).done.get(10, TimeUnit.SECONDS);
      assertThat(a.status()).isEqualTo(400);
      JsonNode error = ServiceClient.JSON.readTree(a.body()).get("error");
      assertThat(error.get("code").asText()).isEqualTo("invalid_key");
      assertThat(error.get("message").asText()).isEqualTo(malformed("key", "%ZZ", 2, "a%ZZ"));
      RawHttp2.Answer rule = h2.request("GET", "/v1/limits/x%/k", null, null).done.get(10, TimeUnit.SECONDS);
      assertThat(ServiceClient.JSON.readTree(rule.body()).get("error").get("code").asText()).isEqualTo("invalid_rule");
      assertThat(h2.request("GET", "/healthz", null, null).done.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
    }
  }

  /** A request header carrying the server's own name for the path as sent. */
  static final class PathEscapesTestHeader {
    static String spoof(String path) {
      return PathEscapes.RAW_PATH + ": " + path;
    }
  }
}
