package dev.sluice.redis;

import dev.sluice.RateLimiter;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Two limiters, {@link #a} and {@link #b}, each with a Redis store (and connection) of its own, on
 * one Redis, as two instances of a service are; each test works under a key prefix of its own.
 * Subclasses give the topology ({@link #uri}, {@link #commandStats}) and the rules.
 */
abstract class TwoInstancesTestBase {
  abstract String uri();

  /** {@code INFO commandstats} of every master, one string each. */
  abstract List<String> commandStats();

  abstract RuleSet rules();

  RedisStore storeA;
  RedisStore storeB;
  RateLimiter a;
  RateLimiter b;

  @BeforeEach
  void twoInstances() {
    String prefix = "x" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";
    storeA = RedisStore.builder(uri()).prefix(prefix).build();
    storeB = RedisStore.builder(uri()).prefix(prefix).build();
    a = Sluice.builder().rules(rules()).store(storeA).build();
    b = Sluice.builder().rules(rules()).store(storeB).build();
  }

  @AfterEach
  void close() {
    a.close();
    b.close();
    storeA.close();
    storeB.close();
  }

  /** Decision calls (FCALL) on every master so far; the policies' own scripts are EVALSHA. */
  long decisionCalls() {
    return CommandStats.decisionCalls(commandStats());
  }
}
