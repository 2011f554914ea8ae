package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testing.FlakyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** acquireAsync decides exactly as acquire, on a local store and on a remote-looking one. */
class AcquireAsyncTest {
  final List<Rule> rules = new ArrayList<>();

  AcquireAsyncTest() {
    for (Algorithm a : Algorithm.values()) {
      rules.add(Rule.builder(a.configName()).algorithm(a).window(3, Duration.ofMillis(700))
          .window(10, Duration.ofSeconds(5)).build());
    }
    rules.add(Rule.builder("shadow").window(2, Duration.ofSeconds(1)).shadow(true).build());
  }

  RateLimiter on(Store store) {
    return Sluice.builder().store(store).rules(RuleSet.of(rules)).build();
  }

  @Test
  void asyncDecisionsEqualSyncDecisionsOnTheMemoryStore() {
    compare(on(MemoryStore.builder().ticker(new FakeTicker()).build()),
        on(MemoryStore.builder().ticker(new FakeTicker()).build()));
  }

  @Test
  void asyncDecisionsEqualSyncDecisionsOnARemoteStore() {
    compare(on(MemoryStore.builder().ticker(new FakeTicker()).build()),
        on(new FlakyStore(MemoryStore.builder().ticker(new FakeTicker()).build())));
  }

  private void compare(RateLimiter sync, RateLimiter async) {
    Random random = new Random(42);
    long t = 1_800_000_000_000_000L;
    int allowed = 0;
    for (int n = 0; n < 3000; n++) {
      t += random.nextInt(4) == 0 ? 0 : random.nextInt(120_000);
      List<Item> items = new ArrayList<>();
      int count = 1 + random.nextInt(3);
      for (int i = 0; i < count; i++) {
        Rule r = rules.get(random.nextInt(rules.size()));
        items.add(Item.of(r.name(), "k" + random.nextInt(3), random.nextInt(5)));
      }
      Request request = Request.of(items).atMicros(t);
      Decision expected = sync.acquire(request);
      assertThat(async.acquireAsync(request).toCompletableFuture().join()).as("request %d", n).isEqualTo(expected);
      allowed += expected.allowed() ? 1 : 0;
    }
    assertThat(allowed).isBetween(300, 2700);
  }
}
