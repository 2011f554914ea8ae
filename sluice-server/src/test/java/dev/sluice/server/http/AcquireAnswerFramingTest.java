package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A decision's answer sets its own {@code Content-Length}: it must be the body's length in bytes,
 * once, whatever the body holds, on a connection that stays open for the next request.
 */
class AcquireAnswerFramingTest {
  private static RunningService api;

  @BeforeAll
  static void start() throws Exception {
    api = new RunningService(null);
  }

  @AfterAll
  static void stop() throws Exception {
    api.close();
  }

  @Test
  void allowedDeniedAndNonAsciiAnswersCarryTheirBodysByteLengthOnceOnOneKeptAliveConnection() throws Exception {
    String[] bodies = {
        "{\"rule\":\"tiny\",\"key\":\"framing\"}",
        "{\"rule\":\"tiny\",\"key\":\"framing\"}",
        "{\"rule\":\"api.call\",\"key\":\"clé-日本-\uD83D\uDE00\"}",
    };
    try (Socket s = new Socket("127.0.0.1", api.port())) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      InputStream in = s.getInputStream();
      int[] statuses = new int[bodies.length];
      for (int i = 0; i < bodies.length; i++) {
        byte[] body = bodies[i].getBytes(StandardCharsets.UTF_8);
        out.write(("POST /v1/acquire HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();

        String head = readHead(in);
        statuses[i] = Integer.parseInt(head.substring(9, 12));
        Map<String, Integer> counts = new LinkedHashMap<>();
        String length = null;
        for (String line : head.split("\r\n")) {
          int colon = line.indexOf(':');
          if (colon > 0) {
            String name = line.substring(0, colon).strip().toLowerCase(Locale.ROOT);
            counts.merge(name, 1, Integer::sum);
            if (name.equals("content-length")) {
              length = line.substring(colon + 1).strip();
            }
          }
        }
        assertThat(counts).containsEntry("content-length", 1).doesNotContainKey("transfer-encoding");
        byte[] answer = in.readNBytes(Integer.parseInt(length));
        String json = new String(answer, StandardCharsets.UTF_8);
        // The whole body and nothing more: it ends where the JSON does, and the next answer's
        // status line follows at once.
        assertThat(json).startsWith("{\"allowed\":").endsWith("]}");
        if (i == 2) {
          assertThat(json).contains("clé-日本-\uD83D\uDE00");
          assertThat(answer.length).isGreaterThan(json.length());
        }
      }
      assertThat(statuses).containsExactly(200, 429, 200);
    }
  }

  /** The status line and header lines, up to the empty line. */
  private static String readHead(InputStream in) throws Exception {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int matched = 0;
    while (matched < 4) {
      int c = in.read();
      if (c < 0) {
        throw new IllegalStateException("connection closed after: " + b);
      }
      b.write(c);
      matched = (c == '\r' && (matched == 0 || matched == 2)) || (c == '\n' && (matched == 1 || matched == 3))
          ? matched + 1 : 0;
    }
    return b.toString(StandardCharsets.ISO_8859_1);
  }
}
