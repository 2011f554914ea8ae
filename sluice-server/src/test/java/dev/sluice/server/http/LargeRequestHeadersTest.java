package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.http.RateLimitHeaders;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A request as large as the API allows (100 items, 512-byte keys) gets an answer every client
 * can read: its RateLimit fields stay within their budget. They used to carry each key as a
 * partition key, 144 KB per line, which curl (exit 27) and Python's http.client (LineTooLong,
 * over 65,536 bytes a line) refused after the quota had been consumed.
 */
class LargeRequestHeadersTest {
  private static RunningService api;

  @BeforeAll
  static void start() throws Exception {
    api = new RunningService(null);
  }

  @AfterAll
  static void stop() throws Exception {
    api.close();
  }

  private static String hundredLongKeys(String rule, String last) {
    StringBuilder b = new StringBuilder("{\"items\":[");
    for (int i = 0; i < 99; i++) {
      b.append(i == 0 ? "" : ",").append("{\"rule\":\"").append(rule).append("\",\"key\":\"")
          .append(String.format("%03d", i)).append("k".repeat(509)).append("\"}");
    }
    return b.append(',').append(last).append("]}").toString();
  }

  @Test
  void aHundredItemsWithLongKeysGetRateLimitFieldsWithinTheBudget() throws Exception {
    String body = hundredLongKeys("api.call", "{\"rule\":\"api.call\",\"key\":\"" + "z".repeat(512) + "\"}");
    HttpResponse<String> r = api.post("/v1/acquire", body);
    assertThat(r.statusCode()).isEqualTo(200);
    String policy = r.headers().firstValue("ratelimit-policy").orElseThrow();
    String limit = r.headers().firstValue("ratelimit").orElseThrow();
    assertThat(policy.length() + limit.length()).isLessThanOrEqualTo(RateLimitHeaders.BUDGET_BYTES);
    assertThat(policy).isEqualTo("\"api.call.3600s\";q=1000000;w=3600");
    assertThat(limit).startsWith("\"api.call.3600s\";r=");
    // The body still explains every item.
    assertThat(r.body()).contains("\"key\":\"098" + "k".repeat(509) + "\"");
  }

  @Test
  void aDeniedHundredItemRequestNamesTheDenyingWindowInItsFields() throws Exception {
    assertThat(api.post("/v1/acquire", "{\"rule\":\"tiny\",\"key\":\"spent\"}").statusCode()).isEqualTo(200);
    HttpResponse<String> r = api.post("/v1/acquire",
        hundredLongKeys("api.call", "{\"rule\":\"tiny\",\"key\":\"spent\"}"));
    assertThat(r.statusCode()).isEqualTo(429);
    String policy = r.headers().firstValue("ratelimit-policy").orElseThrow();
    String limit = r.headers().firstValue("ratelimit").orElseThrow();
    assertThat(policy.length() + limit.length()).isLessThanOrEqualTo(RateLimitHeaders.BUDGET_BYTES);
    assertThat(policy).startsWith("\"tiny.3600s\";q=1;w=3600");
    assertThat(limit).startsWith("\"tiny.3600s\";r=0;t=");
    assertThat(r.headers().firstValue("retry-after")).isPresent();
  }

  @Test
  void everyLineOfTheLargestAnswerIsShortEnoughForPythonAndCurl() throws Exception {
    byte[] body = hundredLongKeys("api.call", "{\"rule\":\"api.call\",\"key\":\"last\"}").getBytes(StandardCharsets.UTF_8);
    List<String> lines = new ArrayList<>();
    try (Socket s = new Socket("127.0.0.1", api.port())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(("POST /v1/acquire HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
          + body.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
      InputStream in = s.getInputStream();
      // Read the header block a line at a time, as http.client does: no line over 65,536 bytes.
      ByteArrayOutputStream line = new ByteArrayOutputStream();
      int total = 0;
      for (int c; (c = in.read()) != -1; ) {
        total++;
        assertThat(line.size()).as("a header line").isLessThan(65_536);
        if (c == '\n') {
          String l = line.toString(StandardCharsets.ISO_8859_1).stripTrailing();
          if (l.isEmpty()) {
            break;
          }
          lines.add(l);
          line.reset();
        } else {
          line.write(c);
        }
      }
      // Node's parser stops at 16 KB of headers, nginx's default proxy buffer at 4-8 KB.
      assertThat(total).as("the header block").isLessThan(RateLimitHeaders.BUDGET_BYTES + 1024);
    }
    assertThat(lines.get(0)).isEqualTo("HTTP/1.1 200 OK");
    assertThat(lines).anySatisfy(l -> assertThat(l.toLowerCase()).startsWith("ratelimit-policy: "));
    assertThat(lines).allSatisfy(l -> assertThat(l.length()).isLessThan(RateLimitHeaders.BUDGET_BYTES));
  }
}
