package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.client.ClientFactory;
import com.linecorp.armeria.client.ConnectionPoolListener;
import com.linecorp.armeria.client.WebClient;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.RequestHeaders;
import com.linecorp.armeria.common.SessionProtocol;
import io.netty.util.AttributeMap;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGTERM as a supervisor sends it to {@code sluice serve}, in a JVM of its own: readiness fails
 * at once, the service keeps answering for the grace so that balancers notice, then takes no new
 * connection, lets the requests in flight finish, tells kept-alive connections to close, and
 * exits as soon as it is drained rather than at the drain timeout.
 */
class GracefulShutdownTest {
  private static final String ACQUIRE = "{\"rule\":\"api\",\"key\":\"k\"}";

  @TempDir
  Path dir;

  @BeforeEach
  void config() throws IOException {
    Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: api
            config:
              - limit: 100000000
                period: 1m
        """);
  }

  @Test
  void afterSigtermReadinessFailsAtOnceAcquireWorksThroughTheGraceAndKeptAliveConnectionsAreToldToClose()
      throws Exception {
    try (ServeProcess p = ServeProcess.serve(dir.resolve("serve.log"), "--config", dir.toString(),
        "--shutdown-grace", "5s", "--drain-timeout", "30s")) {
      int port = p.awaitPort();
      RawHttp1 kept = RawHttp1.connect(port);
      RawHttp1.Response before = kept.post("/v1/acquire", ACQUIRE);
      assertThat(before.status()).isEqualTo(200);
      assertThat(before.connectionClose()).as("a response before SIGTERM keeps the connection").isFalse();
      assertThat(fresh(port, "/readyz").status()).isEqualTo(200);

      long t0 = System.nanoTime();
      p.terminate();
      await(Duration.ofSeconds(2), () -> fresh(port, "/readyz").status() == 503);
      long notReadyMs = millisSince(t0);

      RawHttp1.Response onKept = kept.post("/v1/acquire", ACQUIRE);
      assertThat(onKept.status()).as("acquire during the grace, on a kept-alive connection").isEqualTo(200);
      assertThat(onKept.connectionClose()).as("the kept-alive connection is told to close").isTrue();
      assertThat(kept.closedByServerWithin(2_000)).as("and is closed after that answer").isTrue();

      try (RawHttp1 c = RawHttp1.connect(port)) {
        RawHttp1.Response onNew = c.post("/v1/acquire", ACQUIRE);
        assertThat(onNew.status()).as("acquire on a new connection during the grace").isEqualTo(200);
        assertThat(onNew.connectionClose()).isTrue();
      }
      assertThat(millisSince(t0)).as("still within the grace: the checks above ran in it").isLessThan(5_000);

      assertThat(p.awaitExit(Duration.ofSeconds(20))).as("exited").isTrue();
      long exitMs = millisSince(t0);
      System.out.printf("shutdown, grace 5s: /readyz 503 after %d ms; exited %d ms after SIGTERM%n", notReadyMs, exitMs);
      assertThat(exitMs).as("an idle service exits right after the grace, well before the drain timeout (30 s)")
          .isLessThan(8_000);
      assertThat(p.log()).contains("stopped");
    }
  }

  @Test
  void anHttp2ConnectionIsSentGoawayDuringTheGraceAndItsRequestsStillSucceed() throws Exception {
    try (ServeProcess p = ServeProcess.serve(dir.resolve("serve.log"), "--config", dir.toString(),
        "--shutdown-grace", "5s", "--drain-timeout", "30s")) {
      int port = p.awaitPort();
      AtomicLong opened = new AtomicLong();
      AtomicLong closed = new AtomicLong();
      try (ClientFactory factory = ClientFactory.builder().connectionPoolListener(new ConnectionPoolListener() {
        @Override
        public void connectionOpen(SessionProtocol protocol, InetSocketAddress remote, InetSocketAddress local,
            AttributeMap attrs) {
          opened.incrementAndGet();
        }

        @Override
        public void connectionClosed(SessionProtocol protocol, InetSocketAddress remote, InetSocketAddress local,
            AttributeMap attrs) {
          closed.incrementAndGet();
        }
      }).build()) {
        WebClient h2 = WebClient.builder("h2c://127.0.0.1:" + port).factory(factory).build();
        assertThat(acquire(h2)).isEqualTo(200);
        assertThat(opened.get()).isEqualTo(1);

        long t0 = System.nanoTime();
        p.terminate();
        await(Duration.ofSeconds(2), () -> fresh(port, "/readyz").status() == 503);
        assertThat(acquire(h2)).as("acquire during the grace, on the HTTP/2 connection").isEqualTo(200);
        await(Duration.ofSeconds(2), () -> closed.get() == 1);
        assertThat(acquire(h2)).as("acquire during the grace, on a new connection").isEqualTo(200);
        assertThat(opened.get()).as("connections opened").isEqualTo(2);
        assertThat(millisSince(t0)).as("still within the grace").isLessThan(5_000);
      }
    }
  }

  private static int acquire(WebClient h2) {
    return h2.execute(RequestHeaders.builder(HttpMethod.POST, "/v1/acquire").contentType(MediaType.JSON).build(),
        ACQUIRE).aggregate().join().status().code();
  }

  @Test
  void withNoGraceAnIdleServiceExitsAsSoonAsSigtermArrivesNotAtTheDrainTimeout() throws Exception {
    try (ServeProcess p = ServeProcess.serve(dir.resolve("serve.log"), "--config", dir.toString(),
        "--shutdown-grace", "0s", "--drain-timeout", "30s")) {
      int port = p.awaitPort();
      try (RawHttp1 c = RawHttp1.connect(port)) {
        assertThat(c.post("/v1/acquire", ACQUIRE).status()).isEqualTo(200);
      }
      long t0 = System.nanoTime();
      p.terminate();
      assertThat(p.awaitExit(Duration.ofSeconds(40))).isTrue();
      long exitMs = millisSince(t0);
      System.out.printf("shutdown, no grace, idle: exited %d ms after SIGTERM%n", exitMs);
      assertThat(exitMs).as("idle: nothing to wait for").isLessThan(2_500);
    }
  }

  @Test
  void afterTheGraceNewConnectionsAreRefusedWhileARequestInFlightFinishesThenTheProcessExits() throws Exception {
    try (ServeProcess p = ServeProcess.serve(dir.resolve("serve.log"), "--config", dir.toString(),
        "--shutdown-grace", "1s", "--drain-timeout", "30s")) {
      int port = p.awaitPort();
      // A request whose body is still arriving is in flight for as long as the test wants.
      RawHttp1 inFlight = RawHttp1.connect(port);
      inFlight.postPartially("/v1/acquire", ACQUIRE, 10);

      long t0 = System.nanoTime();
      p.terminate();
      await(Duration.ofSeconds(5), () -> millisSince(t0) > 1_800);
      assertThat(p.process.isAlive()).as("still draining the request in flight:%n%s", p.log()).isTrue();
      assertThat(refused(port)).as("a new connection after the grace is refused").isTrue();

      RawHttp1.Response r = inFlight.finish(ACQUIRE, 10);
      long answeredMs = millisSince(t0);
      assertThat(r.status()).as("the request in flight is answered").isEqualTo(200);
      assertThat(r.connectionClose()).isTrue();
      assertThat(p.awaitExit(Duration.ofSeconds(20))).isTrue();
      long exitMs = millisSince(t0);
      System.out.printf("shutdown with a request in flight: answered %d ms, exited %d ms after SIGTERM%n",
          answeredMs, exitMs);
      assertThat(exitMs - answeredMs).as("exits once drained, not at the drain timeout").isLessThan(2_000);
    }
  }

  @Test
  void aClientThatHonoursReadinessAndConnectionCloseSeesNoFailedRequestDuringShutdown() throws Exception {
    try (ServeProcess p = ServeProcess.serve(dir.resolve("serve.log"), "--config", dir.toString(),
        "--shutdown-grace", "2s", "--drain-timeout", "30s")) {
      int port = p.awaitPort();
      AtomicBoolean routedAway = new AtomicBoolean();
      AtomicLong sent = new AtomicLong();
      AtomicLong failed = new AtomicLong();
      AtomicReference<Throwable> firstFailure = new AtomicReference<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();

      // The balancer: probes /readyz every 100 ms and stops routing at the first failure.
      Thread balancer = new Thread(() -> {
        while (!routedAway.get() && System.nanoTime() < deadline) {
          try {
            if (fresh(port, "/readyz").status() != 200) {
              routedAway.set(true);
            }
            Thread.sleep(100);
          } catch (IOException | InterruptedException e) {
            routedAway.set(true);
          }
        }
      });
      // Four clients: requests back to back on a kept-alive connection, a new one when told to close.
      Runnable client = () -> {
        RawHttp1 c = null;
        while (!routedAway.get() && System.nanoTime() < deadline) {
          try {
            if (c == null) {
              c = RawHttp1.connect(port);
            }
            sent.incrementAndGet();
            RawHttp1.Response r = c.post("/v1/acquire", ACQUIRE);
            if (r.status() != 200) {
              throw new IOException("status " + r.status() + ": " + r.body());
            }
            if (r.connectionClose()) {
              c.close();
              c = null;
            }
          } catch (IOException e) {
            failed.incrementAndGet();
            firstFailure.compareAndSet(null, e);
            c = null;
          }
        }
      };
      List<Thread> clients = List.of(new Thread(client), new Thread(client), new Thread(client), new Thread(client));
      balancer.start();
      clients.forEach(Thread::start);
      await(Duration.ofSeconds(15), () -> sent.get() >= 400);
      long t0 = System.nanoTime();
      long beforeSigterm = sent.get();
      p.terminate();
      for (Thread t : clients) {
        t.join(25_000);
      }
      balancer.join(25_000);
      assertThat(p.awaitExit(Duration.ofSeconds(20))).isTrue();
      long exitMs = millisSince(t0);
      System.out.printf("shutdown under load (4 clients), grace 2s: %d requests (%d after SIGTERM), %d failed, exited %d ms "
          + "after SIGTERM%n", sent.get(), sent.get() - beforeSigterm, failed.get(), exitMs);
      assertThat(failed.get()).as("failed requests; the first: %s", firstFailure.get()).isZero();
      assertThat(exitMs).as("exits soon after the grace, not at the drain timeout (30 s)").isLessThan(6_000);
    }
  }

  /** One request on a connection of its own. */
  private static RawHttp1.Response fresh(int port, String path) throws IOException {
    try (RawHttp1 c = RawHttp1.connect(port)) {
      return c.get(path);
    }
  }

  /** True if a new connection is refused, or closed without an answer to its request. */
  private static boolean refused(int port) {
    try (RawHttp1 c = RawHttp1.connect(port)) {
      c.get("/healthz");
      return false;
    } catch (IOException e) {
      return true;
    }
  }

  private interface Condition {
    boolean holds() throws Exception;
  }

  /** Waits until {@code c} holds (an exception counts as not yet), at most {@code limit}. */
  private static void await(Duration limit, Condition c) throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (true) {
      try {
        if (c.holds()) {
          return;
        }
      } catch (Exception e) {
        // not yet
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within " + limit);
      }
      Thread.sleep(20);
    }
  }

  private static long millisSince(long t0) {
    return (System.nanoTime() - t0) / 1_000_000;
  }
}
