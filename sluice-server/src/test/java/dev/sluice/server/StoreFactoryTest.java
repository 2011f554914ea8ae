package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.memory.MemoryStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.redis.internal.Redaction;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testkit.Cluster;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class StoreFactoryTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  @RegisterExtension
  static final RedisExtension<Cluster> cluster = RedisExtension.cluster(Flavor.REDIS);

  @Test
  void memoryIsAMemoryStoreOnTheGivenClock() {
    FakeTicker ticker = new FakeTicker();
    try (Store s = StoreFactory.open("memory", ticker)) {
      assertThat(s).isInstanceOf(MemoryStore.class);
      assertThat(s.describe()).isEqualTo("memory");
    }
  }

  @Test
  void aRedisUriOpensARedisStoreOnThatServer() {
    try (Store s = StoreFactory.open(redis.get().uri())) {
      assertThat(s).isInstanceOf(RedisStore.class);
      assertThat(s.describe()).isEqualTo("redis redis://127.0.0.1:" + redis.get().port() + " prefix=sluice:");
      assertThat(s.ping().toCompletableFuture().join()).isTrue();
    }
  }

  @Test
  void aClusterUriOpensARedisStoreOnTheCluster() {
    try (Store s = StoreFactory.open(cluster.get().uri())) {
      assertThat(s).isInstanceOf(RedisStore.class);
      assertThat(s.describe()).startsWith("redis redis-cluster://127.0.0.1:");
      assertThat(s.ping().toCompletableFuture().join()).isTrue();
    }
  }

  @Test
  void schemesAreRecognisedWhateverTheirCase() {
    for (String uri : new String[] {"redis://h", "REDIS://h", "rediss://h:6380/0", "redis-sentinel://h1:26379#m",
        "rediss-sentinel://h#m", "redis-cluster://h1:7000,h2:7001", "Rediss-Cluster://h:7000"}) {
      assertThat(StoreFactory.isRedis(uri)).as(uri).isTrue();
    }
    for (String spec : new String[] {"memory", "redis", "postgres://db", "://h", "redis:/h"}) {
      assertThat(StoreFactory.isRedis(spec)).as(spec).isFalse();
    }
  }

  @Test
  void anUnreachableServerIsReportedWithoutThePassword() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    String uri = "redis://admin:s3cret@127.0.0.1:" + port;
    assertThatThrownBy(() -> StoreFactory.open(uri)).isInstanceOf(StoreUnavailableException.class)
        .hasMessageStartingWith("cannot connect to redis://admin:***@127.0.0.1:" + port + ": ")
        .message().doesNotContain("s3cret");
  }

  @Test
  void aWrongPasswordIsReportedWithoutEitherPassword() {
    try (Standalone guarded = Standalone.start(Flavor.REDIS, "requirepass right-one")) {
      String wrong = "redis://:wrong-one@127.0.0.1:" + guarded.port();
      assertThatThrownBy(() -> StoreFactory.open(wrong)).isInstanceOf(StoreUnavailableException.class)
          .message().contains("redis://:***@127.0.0.1:" + guarded.port()).doesNotContain("wrong-one")
          .doesNotContain("right-one");
      try (Store s = StoreFactory.open("redis://:right-one@127.0.0.1:" + guarded.port())) {
        assertThat(s.ping().toCompletableFuture().join()).isTrue();
        assertThat(s.describe()).doesNotContain("right-one");
      }
    }
  }

  @Test
  void badRedisUrisAreRejectedNamingTheProblem() {
    assertThatThrownBy(() -> StoreFactory.open("redis-sentinel://u:s3cret@h1:26379")).isInstanceOf(
        IllegalArgumentException.class).hasMessageContaining("names no master").message().doesNotContain("s3cret");
  }

  @Test
  void unknownStoresNameTheAcceptedForms() {
    assertThatThrownBy(() -> StoreFactory.open("postgres://db")).hasMessage("unknown store 'postgres://db'; expected "
        + "memory or a redis://, rediss://, redis-sentinel:// or redis-cluster:// URI");
    assertThatThrownBy(() -> StoreFactory.open("Memory")).hasMessageStartingWith("unknown store 'Memory'");
  }

  @Test
  void passwordsNeverAppearInMessages() {
    assertThat(Redaction.uri("redis://user:s3cret@h:6379/0")).isEqualTo("redis://user:***@h:6379/0");
    assertThat(Redaction.uri("redis://:s3cret@h:6379")).isEqualTo("redis://:***@h:6379");
    assertThat(Redaction.uri("rediss://s3cret@h")).isEqualTo("rediss://***@h");
    assertThat(Redaction.uri("redis://h:6379")).isEqualTo("redis://h:6379");
    assertThatThrownBy(() -> StoreFactory.open("nope://u:s3cret@h")).message().doesNotContain("s3cret");
  }

  /** Without a scheme the spec is no URI, but its user info is still a password. */
  @Test
  void aSpecWithoutASchemeIsRefusedWithoutItsPassword() {
    assertThatThrownBy(() -> StoreFactory.open("admin:s3cret@127.0.0.1:6379"))
        .hasMessageStartingWith("unknown store 'admin:***@127.0.0.1:6379'").message().doesNotContain("s3cret");
  }

  @Test
  void aDriverMessageThatEchoesThePasswordIsScrubbed() {
    Exception e = new RuntimeException("outer", new IllegalStateException("AUTH p%40ss p@ss failed"));
    assertThat(StoreFactory.reason(e, "redis://u:p%40ss@h")).isEqualTo("outer (AUTH *** *** failed)");
  }
}
