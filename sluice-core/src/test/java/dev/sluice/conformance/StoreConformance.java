package dev.sluice.conformance;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Item;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.WindowState;
import dev.sluice.spi.Store;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;

/**
 * What every conformance class shares: a fresh store per test (from {@link #newStore()}), rule
 * names unique to the test, and requests at explicit times.
 *
 * <p>Explicit times keep the suite independent of the store's clock, so a store deciding on a
 * server's clock (Redis {@code TIME}) passes the same numbers as the memory store. Every test
 * names its rules with a random suffix and resets nothing globally, so suites may share one
 * external server.
 */
public abstract class StoreConformance {

  /**
   * 2026-12-11T00:00:00Z in milliseconds since the Unix epoch: a whole number of days, so fixed
   * windows and sliding-window buckets of any period dividing a day start exactly here.
   */
  public static final long BASE_MS = 1_797_120_000_000L;

  private final String suffix = Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
  private Store store;

  /**
   * A store for one test. The suite closes it after the test (through the limiter built on it);
   * a store that should outlive the test can return a wrapper whose {@code close} does nothing.
   */
  protected abstract Store newStore();

  /** Whether the store implements {@code algorithm}; a store that does not is skipped, visibly. */
  protected boolean supports(Algorithm algorithm) {
    return true;
  }

  /** Whether the store treats a time earlier than one it already saw for a key as that latest time. */
  protected boolean clampsTimePerKey() {
    return true;
  }

  @BeforeEach
  final void openStore() {
    store = newStore();
  }

  @AfterEach
  final void closeStore() {
    if (store != null) {
      store.close();
    }
  }

  protected final Store store() {
    return store;
  }

  protected final void assumeSupported(Algorithm algorithm) {
    Assumptions.assumeTrue(supports(algorithm), () -> describe() + " does not implement " + algorithm.configName());
  }

  private String describe() {
    return store == null ? "this store" : store.describe();
  }

  /** A limiter over this test's store. Not closed by the caller: the store is closed after the test. */
  protected final RateLimiter limiter(Rule... rules) {
    return newLimiter(RuleSet.of(rules));
  }

  /**
   * A limiter deciding {@code rules} over this test's store, from {@code Sluice.builder()}. A
   * store whose rules are a server's own (the client of {@code sluice serve}, which reads them
   * from the service) overrides it: it puts {@code rules} in force on the server, then returns
   * its limiter, which it closes after the test.
   */
  protected RateLimiter newLimiter(RuleSet rules) {
    return Sluice.builder().store(store).rules(rules).build();
  }

  /** Replaces the rules in force of a limiter from {@link #newLimiter}; overridden with it. */
  protected void updateRules(RateLimiter limiter, RuleSet rules) {
    limiter.updateRules(rules);
  }

  /**
   * Whether the store decides an item under the windows it is given ({@link
   * dev.sluice.spi.ResolvedItem#windows()}). A store that asks a server deciding by its own
   * rules does not: the server resolves each key's windows itself.
   */
  protected boolean decidesGivenWindows() {
    return true;
  }

  /** {@code stem} made unique to this test, so tests sharing a server never see each other's state. */
  protected final String unique(String stem) {
    return "conf." + stem + "." + suffix;
  }

  protected final Rule.Builder rule(String stem) {
    return Rule.builder(unique(stem));
  }

  protected static Duration ms(long millis) {
    return Duration.ofMillis(millis);
  }

  /** {@code items} decided at {@code ms} milliseconds after {@link #BASE_MS}. */
  protected static Decision at(RateLimiter limiter, long ms, Item... items) {
    return limiter.acquire(Request.of(items).atMillis(BASE_MS + ms));
  }

  /** The state of every window of a (rule, key), consuming nothing. */
  protected static Decision peek(RateLimiter limiter, long ms, String rule, String key) {
    return at(limiter, ms, Item.of(rule, key, 0));
  }

  protected static long remaining(Decision d, int item, int window) {
    return d.items().get(item).windows().get(window).remaining();
  }

  /** A window state as the store must report it. */
  protected static WindowState ws(long limit, long periodMs, long remaining, long retryAfterMs, long resetAfterMs,
      boolean exceeded) {
    return new WindowState(limit, periodMs, remaining, retryAfterMs, resetAfterMs, exceeded);
  }
}
