package dev.sluice.redis;

import dev.sluice.ItemDecision;
import dev.sluice.RuleSet;
import dev.sluice.spi.Batch;
import dev.sluice.spi.Store;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One Redis store per URI for a whole test run, handed to each test behind a wrapper whose
 * {@code close} does nothing: a new Lettuce client per test would cost more than the test.
 */
final class SharedStore implements Store {
  private static final Map<String, RedisStore> STORES = new ConcurrentHashMap<>();

  private final RedisStore store;

  private SharedStore(RedisStore store) {
    this.store = store;
  }

  /**
   * The shared store for {@code uri}. Its TTL slack is a minute: tests decide on explicit times
   * that advance far slower than real time on a busy machine, and their keys must not expire
   * between two steps of a test.
   */
  static SharedStore of(String uri) {
    return new SharedStore(STORES.computeIfAbsent(uri,
        u -> RedisStore.builder(u).ttlSlack(java.time.Duration.ofMinutes(1)).build()));
  }

  RedisStore store() {
    return store;
  }

  @Override
  public CompletionStage<List<ItemDecision>> decide(Batch batch) {
    return store.decide(batch);
  }

  @Override
  public CompletionStage<Void> reset(String rule, String key) {
    return store.reset(rule, key);
  }

  @Override
  public void rulesChanged(RuleSet before, RuleSet after) {
    store.rulesChanged(before, after);
  }

  @Override
  public CompletionStage<Boolean> ping() {
    return store.ping();
  }

  @Override
  public String describe() {
    return store.describe();
  }

  @Override
  public void close() {
    // Shared: closed when the JVM exits.
  }

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> STORES.values().forEach(RedisStore::close)));
  }
}
