package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
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
  void redisUrisAreRecognisedButNotYetAvailable() {
    for (String uri : new String[] {"redis://localhost:6379", "rediss://h:6380/0", "redis-sentinel://h1:26379,h2:26379/0#m",
        "redis-cluster://h1:7000,h2:7001"}) {
      assertThatThrownBy(() -> StoreFactory.open(uri)).isInstanceOf(IllegalArgumentException.class)
          .hasMessage("the Redis store is not available in this build (" + uri + ")");
    }
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
    assertThatThrownBy(() -> StoreFactory.open("redis://u:s3cret@h")).message().doesNotContain("s3cret");
    assertThatThrownBy(() -> StoreFactory.open("nope://u:s3cret@h")).message().doesNotContain("s3cret");
  }
}
