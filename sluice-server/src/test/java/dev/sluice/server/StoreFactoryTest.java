package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.memory.MemoryStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.Test;

class StoreFactoryTest {

  @Test
  void memoryIsAMemoryStoreOnTheGivenClock() {
    FakeTicker ticker = new FakeTicker();
    try (Store s = StoreFactory.open("memory", ticker)) {
      assertThat(s).isInstanceOf(MemoryStore.class);
      assertThat(s.describe()).isEqualTo("memory");
    }
  }

  @Test
  void redisUriOpensARedisStore() {
    try (Standalone redis = Standalone.start(Flavor.REDIS); Store s = StoreFactory.open(redis.uri())) {
      assertThat(s).isInstanceOf(RedisStore.class);
      assertThat(s.describe()).isEqualTo("redis " + redis.uri() + " prefix=sluice:");
      assertThat(s.ping().toCompletableFuture().join()).isTrue();
    }
  }

  @Test
  void unreachableRedisFailsNamingTheStoreWithoutItsPassword() {
    assertThatThrownBy(() -> StoreFactory.open("redis://u:s3cret@127.0.0.1:1")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("cannot connect to the Redis store redis://u:***@127.0.0.1:1")
        .message().doesNotContain("s3cret");
  }

  @Test
  void unknownStoresNameTheAcceptedForms() {
    assertThatThrownBy(() -> StoreFactory.open("postgres://db")).hasMessage("unknown store 'postgres://db'; expected "
        + "memory or a redis://, rediss://, redis-sentinel:// or redis-cluster:// URI");
    assertThatThrownBy(() -> StoreFactory.open("Memory")).hasMessageStartingWith("unknown store 'Memory'");
  }

  @Test
  void passwordsNeverAppearInMessages() {
    assertThat(StoreFactory.redact("redis://user:s3cret@h:6379/0")).isEqualTo("redis://user:***@h:6379/0");
    assertThat(StoreFactory.redact("redis://:s3cret@h:6379")).isEqualTo("redis://:***@h:6379");
    assertThat(StoreFactory.redact("rediss://s3cret@h")).isEqualTo("rediss://***@h");
    assertThat(StoreFactory.redact("redis://h:6379")).isEqualTo("redis://h:6379");
    assertThatThrownBy(() -> StoreFactory.open("redis://u:s3cret@127.0.0.1:1")).message().doesNotContain("s3cret");
    assertThatThrownBy(() -> StoreFactory.open("nope://u:s3cret@h")).message().doesNotContain("s3cret");
  }
}
