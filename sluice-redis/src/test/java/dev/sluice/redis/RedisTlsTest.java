package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code rediss://} connects over TLS, to servers whose certificates the test makes. */
class RedisTlsTest {

  @Test
  void redissSchemeDecidesOverTls(@TempDir Path dir) throws Exception {
    Path key = dir.resolve("server.key");
    Path cert = dir.resolve("server.crt");
    run(dir, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
        "-keyout", key.toString(), "-out", cert.toString());
    int tlsPort = freePort();
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

  /**
   * The production setup: the server's certificate, signed by a CA the JVM trusts, is verified
   * with its host name (Lettuce's default, {@code verifyPeer=FULL}), and the store authenticates
   * as a user holding only the commands it needs ({@link RedisLeastPrivilegeTest}). A server the
   * trust store does not vouch for is refused, and the password never shows.
   */
  @Test
  void redissVerifiesTheServerCertificateAndDecidesAsALeastPrivilegeUser(@TempDir Path dir) throws Exception {
    Path caKey = dir.resolve("ca.key");
    Path ca = dir.resolve("ca.crt");
    Path key = dir.resolve("server.key");
    Path csr = dir.resolve("server.csr");
    Path cert = dir.resolve("server.crt");
    Path ext = dir.resolve("san.cnf");
    Path trust = dir.resolve("trust.p12");
    run(dir, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=sluice test CA",
        "-keyout", caKey.toString(), "-out", ca.toString());
    run(dir, "openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", key.toString(),
        "-out", csr.toString());
    Files.writeString(ext, "subjectAltName=IP:127.0.0.1\n", StandardCharsets.US_ASCII);
    run(dir, "openssl", "x509", "-req", "-in", csr.toString(), "-CA", ca.toString(), "-CAkey", caKey.toString(),
        "-CAcreateserial", "-days", "1", "-extfile", ext.toString(), "-out", cert.toString());
    run(dir, Path.of(System.getProperty("java.home"), "bin", "keytool").toString(), "-importcert", "-noprompt",
        "-alias", "sluice-test-ca", "-file", ca.toString(), "-keystore", trust.toString(), "-storetype", "PKCS12",
        "-storepass", "changeit");
    int tlsPort = freePort();
    Standalone server = Standalone.start(Flavor.REDIS, "tls-port " + tlsPort, "tls-cert-file " + cert,
        "tls-key-file " + key, "tls-ca-cert-file " + ca, "tls-auth-clients no",
        "user sluice " + RedisLeastPrivilegeTest.rules(RedisLeastPrivilegeTest.NEEDED));
    String uri = "rediss://sluice:" + RedisLeastPrivilegeTest.PASSWORD + "@127.0.0.1:" + tlsPort;
    String[] props = {"javax.net.ssl.trustStore", "javax.net.ssl.trustStorePassword", "javax.net.ssl.trustStoreType"};
    String[] saved = new String[props.length];
    for (int i = 0; i < props.length; i++) {
      saved[i] = System.getProperty(props[i]);
    }
    try {
      // Not trusted (the JDK's own CAs): refused, without the password in what is reported.
      assertThatThrownBy(() -> RedisStore.builder(uri).connectTimeout(Duration.ofSeconds(5)).build())
          .satisfies(e -> assertThat(causes(e)).contains("unable to find valid certification path")
              .doesNotContain(RedisLeastPrivilegeTest.PASSWORD));

      System.setProperty(props[0], trust.toString());
      System.setProperty(props[1], "changeit");
      System.setProperty(props[2], "PKCS12");
      try (RedisStore store = RedisStore.connect(uri)) {
        assertThat(store.describe()).contains("rediss://sluice@127.0.0.1:" + tlsPort)
            .doesNotContain(RedisLeastPrivilegeTest.PASSWORD);
        assertThat(RedisLeastPrivilegeTest.smoke(server, uri, "tls", false)).as("what failed over TLS").isEmpty();
      }
      // The certificate names 127.0.0.1, not localhost: the host name is verified too.
      assertThatThrownBy(() -> RedisStore.builder(uri.replace("127.0.0.1", "localhost"))
          .connectTimeout(Duration.ofSeconds(5)).build())
          .satisfies(e -> assertThat(causes(e)).contains("No name matching localhost found"));
    } finally {
      for (int i = 0; i < props.length; i++) {
        if (saved[i] == null) {
          System.clearProperty(props[i]);
        } else {
          System.setProperty(props[i], saved[i]);
        }
      }
      server.close();
    }
  }

  /** Every message of the exception and its causes, one a line. */
  private static String causes(Throwable e) {
    StringBuilder b = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      b.append(t.getClass().getSimpleName()).append(": ").append(t.getMessage()).append('\n');
    }
    return b.toString();
  }

  private static void run(Path dir, String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("%s (apt-get install -y openssl)", command[0]).isTrue();
    assertThat(p.exitValue()).as("%s: %s", String.join(" ", command), new String(out, StandardCharsets.UTF_8)).isZero();
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
