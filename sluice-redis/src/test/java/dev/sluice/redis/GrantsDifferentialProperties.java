package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.algorithm.TokenBucket;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Batch;
import dev.sluice.spi.Grants;
import dev.sluice.spi.Grants.Grant;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Random traces of takes, give-backs and ordinary decisions on explicit times, through the memory
 * store (on a fake ticker) and a Redis store: every answer must be the same, a take must grant
 * exactly what a sequence of one-unit decisions would admit then (capped at the units asked), and
 * the units held by each key — admitted by decisions, plus taken, less given back — never exceed
 * what the algorithm allows within any window.
 */
class GrantsDifferentialProperties {
  private static final long START_MS = 1_800_000_000_000L;
  private static final AtomicInteger TRIES = new AtomicInteger();
  private static Standalone server;
  private static RedisStore redis;

  @BeforeContainer
  static void start() {
    server = Standalone.start(Flavor.REDIS);
    redis = RedisStore.builder(server.uri()).ttlSlack(Duration.ofMinutes(10)).build();
  }

  @AfterContainer
  static void stop() {
    if (redis != null) {
      redis.close();
    }
    if (server != null) {
      server.close();
    }
  }

  /** One step: kind 0 decides cost {@code n % 4}, 1 takes {@code n} units, 2 gives back part of a grant. */
  record Step(long advanceMs, int kind, int rule, int key, int n, int pick) {}

  private static final String[] KEYS = {"a", "b"};

  private static List<Rule> rules(int run) {
    String s = "." + run;
    return List.of(
        Rule.builder("fixed" + s).algorithm(Algorithm.FIXED_WINDOW).window(5, Duration.ofSeconds(3)).build(),
        Rule.builder("sliding" + s).algorithm(Algorithm.SLIDING_WINDOW).window(6, Duration.ofSeconds(4)).build(),
        // A log of 5 units is full at once: takes overwrite units that have left its windows.
        Rule.builder("log" + s).algorithm(Algorithm.SLIDING_LOG).window(5, Duration.ofSeconds(3))
            .window(4, Duration.ofSeconds(5)).build(),
        // Units leave a one-second log between most steps: takes often overwrite a full ring.
        Rule.builder("short" + s).algorithm(Algorithm.SLIDING_LOG).window(5, Duration.ofSeconds(1)).build(),
        Rule.builder("bucket" + s).algorithm(Algorithm.TOKEN_BUCKET).window(4, Duration.ofSeconds(2))
            .window(7, Duration.ofSeconds(6)).build());
  }

  @Provide
  Arbitrary<List<Step>> traces() {
    Arbitrary<Step> step = Combinators.combine(Arbitraries.longs().between(0, 1200),
        Arbitraries.integers().between(0, 2), Arbitraries.integers().between(0, 4),
        Arbitraries.integers().between(0, 1), Arbitraries.integers().between(1, 8),
        Arbitraries.integers().between(0, 99)).as(Step::new);
    return step.list().ofMinSize(1).ofMaxSize(50);
  }

  /** A grant as each store answered it, its units still held (given back: no longer a candidate). */
  record Held(ResolvedItem item, Grant memory, Grant redis, long[] event) {}

  @Property(tries = 60)
  void takesAndGiveBacksAgreeAndNeverExceedTheLimit(@ForAll("traces") List<Step> trace) {
    int run = TRIES.incrementAndGet();
    List<Rule> rules = rules(run);
    FakeTicker ticker = new FakeTicker(START_MS * 1000);
    MemoryStore memory = MemoryStore.builder().ticker(ticker).automaticSweeps(false).build();
    Grants mg = memory.grants().orElseThrow();
    RedisGrants rg = (RedisGrants) redis.grants().orElseThrow();
    Map<String, List<long[]>> admitted = new HashMap<>(); // per rule and key: {time µs, units}
    List<Held> held = new ArrayList<>();
    long now = START_MS * 1000;
    for (int i = 0; i < trace.size(); i++) {
      Step step = trace.get(i);
      now += step.advanceMs() * 1000;
      ticker.setMicros(now);
      Rule rule = rules.get(step.rule());
      String key = KEYS[step.key()];
      List<long[]> events = admitted.computeIfAbsent(rule.name() + "/" + key, k -> new ArrayList<>());
      String at = "step " + i + " at " + (now / 1000 - START_MS) + " ms, " + step;
      if (step.kind() == 0) {
        ResolvedItem it = new ResolvedItem(rule, key, step.n() % 4, rule.windowsFor(key));
        Batch b = new Batch(List.of(it), now);
        ItemDecision expected = memory.decideSync(b).get(0);
        assertThat(redis.decideSync(b).get(0)).as(at).isEqualTo(expected);
        if (expected.allowed() && it.cost() > 0) {
          events.add(new long[] {now, it.cost()});
        }
      } else if (step.kind() == 1) {
        ResolvedItem it = new ResolvedItem(rule, key, 1, rule.windowsFor(key));
        ItemDecision peek = memory.decideSync(new Batch(List.of(new ResolvedItem(rule, key, 0, it.windows())), now))
            .get(0);
        assertThat(redis.decideSync(new Batch(List.of(new ResolvedItem(rule, key, 0, it.windows())), now)).get(0))
            .as(at).isEqualTo(peek);
        long fits = peek.windows().stream().mapToLong(WindowState::remaining).min().orElseThrow();
        Grant m = mg.take(it, step.n()).toCompletableFuture().join();
        Grant r = rg.takeAt(it, step.n(), now).toCompletableFuture().join();
        assertThat(r.units()).as(at).isEqualTo(m.units());
        assertThat(r.atMicros()).as(at).isEqualTo(m.atMicros()).isEqualTo(now);
        assertThat(r.report()).as(at).isEqualTo(m.report());
        // Exactly what one-unit decisions would admit now, no more than asked.
        assertThat(m.units()).as(at).isEqualTo(Math.min(step.n(), Math.max(0, fits)));
        if (m.units() > 0) {
          long[] event = {now, m.units()};
          events.add(event);
          held.add(new Held(it, m, r, event));
        }
      } else if (!held.isEmpty()) {
        // The newest grant half the time: given back before later commits moved the key on.
        Held h = held.remove(step.pick() < 50 ? held.size() - 1 : step.pick() % held.size());
        long units = 1 + step.pick() % h.memory().units();
        mg.giveBack(h.item(), h.memory(), units).toCompletableFuture().join();
        redis.grants().orElseThrow().giveBack(h.item(), h.redis(), units).toCompletableFuture().join();
        h.event()[1] -= units;
      }
      for (Map.Entry<String, List<long[]>> en : admitted.entrySet()) {
        Rule r = rules.stream().filter(x -> en.getKey().startsWith(x.name() + "/")).findFirst().orElseThrow();
        withinLimits(r, en.getValue(), at + ", " + en.getKey());
      }
    }
  }

  /** The units of {@code events} (time, units) never exceed what {@code rule}'s algorithm admits. */
  private static void withinLimits(Rule rule, List<long[]> events, String at) {
    for (Window w : rule.windows()) {
      long p = w.periodMicros();
      for (long[] a : events) {
        long sum = 0;
        long last = a[0];
        for (long[] b : events) {
          boolean counted = switch (rule.algorithm()) {
            case FIXED_WINDOW -> Math.floorDiv(b[0], p) == Math.floorDiv(a[0], p);
            case TOKEN_BUCKET -> b[0] >= a[0];
            default -> b[0] >= a[0] && b[0] < a[0] + p;
          };
          if (counted) {
            sum += b[1];
            if (rule.algorithm() == Algorithm.TOKEN_BUCKET) {
              last = Math.max(last, b[0]);
              // GCRA: within [a, last], at most the burst plus what refilled since.
              long t = TokenBucket.emissionInterval(w.limit(), p);
              assertThat(sum).as("%s, window %s from %d", at, w, a[0]).isLessThanOrEqualTo(w.limit() + (last - a[0]) / t);
            }
          }
        }
        assertThat(sum).as("%s, window %s from %d", at, w, a[0])
            .isLessThanOrEqualTo(rule.algorithm() == Algorithm.TOKEN_BUCKET ? Long.MAX_VALUE : w.limit());
      }
    }
  }
}
