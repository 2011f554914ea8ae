package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A client cannot fill the service's log: what it sends wrong is answered, and logged in one line
 * at most. Armeria used to report each body over the limit 10 s later with a 40-line stack trace,
 * and each malformed Upgrade header at once with another.
 */
class QuietLogsTest {
  /** Armeria's report of exceptions that no logging decorator saw comes every 10 s. */
  private static final long REPORT_INTERVAL_MS = 10_000;

  @Test
  void oversizeBodiesAndBrokenHeadersLeaveNoStackTraceInTheLog() throws Exception {
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(new Tee(original, captured), true, StandardCharsets.UTF_8));
    try (RunningService api = new RunningService(null)) {
      long started = System.currentTimeMillis();
      String big = "{\"rule\":\"api.call\",\"key\":\"" + "k".repeat(70_000) + "\"}";
      assertThat(api.post("/v1/acquire", big).statusCode()).isEqualTo(400);
      assertThat(api.post("/v1/reset", big).statusCode()).isEqualTo(400);
      String chunked = "POST /v1/acquire HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
          + "11170\r\n" + "k".repeat(0x11170) + "\r\n0\r\n\r\n";
      assertThat(api.raw(chunked.getBytes(StandardCharsets.US_ASCII))).isEqualTo(400);
      String upgrade = "GET /v1/rules HTTP/1.1\r\nHost: x\r\nUpgrade: \"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      assertThat(api.raw(upgrade.getBytes(StandardCharsets.US_ASCII))).isEqualTo(400);
      // Past the first report, with a margin for a busy machine.
      long wait = started + REPORT_INTERVAL_MS + 2_000 - System.currentTimeMillis();
      if (wait > 0) {
        Thread.sleep(wait);
      }
    } finally {
      System.setErr(original);
    }
    String log = captured.toString(StandardCharsets.UTF_8);
    assertThat(log).doesNotContain("\tat ").doesNotContain("ContentTooLargeException")
        .doesNotContain("HttpStatusException").doesNotContain("Unexpected exception");
  }

  private static final class Tee extends OutputStream {
    private final OutputStream a;
    private final OutputStream b;

    Tee(OutputStream a, OutputStream b) {
      this.a = a;
      this.b = b;
    }

    @Override
    public synchronized void write(int c) throws java.io.IOException {
      a.write(c);
      b.write(c);
    }

    @Override
    public synchronized void write(byte[] buf, int off, int len) throws java.io.IOException {
      a.write(buf, off, len);
      b.write(buf, off, len);
    }
  }
}
