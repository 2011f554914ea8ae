package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code rediss://} connects over TLS. */
class RedisTlsTest {

  @Test
  void redissSchemeDecidesOverTls(@TempDir Path dir) throws Exception {
    Path key = dir.resolve("server.key");
    Path cert = dir.resolve("server.crt");
    Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        "-subj", "/CN=127.0.0.1", "-keyout", key.toString(), "-out", cert.toString())
        .redirectErrorStream(true).start();
    assertThat(openssl.waitFor(60, TimeUnit.SECONDS)).as("openssl (apt-get install -y openssl)").isTrue();
    assertThat(openssl.exitValue()).as("openssl exit: %s", new String(openssl.getInputStream().readAllBytes())).isZero();
    int tlsPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      tlsPort = s.getLocalPort();
    }
    Standalone server = Standalone.start(Flavor.REDIS, "tls-port " + tlsPort, "tls-cert-file " + cert,
        "tls-key-file " + key, "tls-ca-cert-file " + cert, "tls-auth-clients no");
    try (RedisStore store = RedisStore.connect("rediss://127.0.0.1:" + tlsPort + "?verifyPeer=NONE")) {
      assertThat(store.describe()).startsWith("redis rediss://127.0.0.1:" + tlsPort);
      Rule rule = Rule.builder("tls").window(1, Duration.ofMinutes(1)).build();
      Batch one = new Batch(List.of(new ResolvedItem(rule, "k", 1, rule.windows())), Request.STORE_CLOCK);
      assertThat(store.decideSync(one).get(0).allowed()).isTrue();
      assertThat(store.decideSync(one).get(0).allowed()).isFalse();
      assertThat(Files.exists(cert)).isTrue();
    } finally {
      server.close();
    }
  }
}
