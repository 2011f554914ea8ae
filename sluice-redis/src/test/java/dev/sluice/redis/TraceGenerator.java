package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.KeyOverride;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/** Random rules and request traces on an explicit clock, reproducible from a seed. */
final class TraceGenerator {
  /**
   * Sizes of a trace: window limits up to {@code maxLimit}, periods up to {@code maxPeriodMicros},
   * costs mostly up to {@code maxCost}, forward steps up to {@code maxStepMicros}, and one step in
   * {@code jumpEvery} a jump forward by {@code jumpMicros} (0: never); with {@code longPeriodMicros}
   * above 0, each rule's first window lasts about that long.
   */
  record Profile(int maxLimit, int maxPeriodMicros, int maxCost, int maxStepMicros, int jumpEvery, long jumpMicros,
      long longPeriodMicros) {
    static final Profile SMALL = new Profile(12, 30_000, 3, 3000, 0, 0, 0);
  }

  private final Random random;
  private final Profile profile;
  final List<Rule> rules = new ArrayList<>();
  private final List<String> keys;
  private long now;

  TraceGenerator(long seed, List<Algorithm> algorithms, int rulesPerAlgorithm, int keyCount, long startMicros) {
    this(seed, algorithms, rulesPerAlgorithm, keyCount, startMicros, Profile.SMALL);
  }

  TraceGenerator(long seed, List<Algorithm> algorithms, int rulesPerAlgorithm, int keyCount, long startMicros,
      Profile profile) {
    this.random = new Random(seed);
    this.profile = profile;
    this.now = startMicros;
    int n = 0;
    for (Algorithm a : algorithms) {
      for (int r = 0; r < rulesPerAlgorithm; r++) {
        rules.add(rule("r" + (n++) + "." + a.configName(), a));
      }
    }
    keys = new ArrayList<>();
    for (int k = 0; k < keyCount; k++) {
      keys.add(k % 3 == 0 ? "vip:" + k : "user:" + k);
    }
  }

  private Rule rule(String name, Algorithm a) {
    Rule.Builder b = Rule.builder(name).algorithm(a);
    for (Window w : windows()) {
      b.window(w);
    }
    if (a == Algorithm.SLIDING_WINDOW) {
      b.precision(1 + random.nextInt(6));
    }
    if (a == Algorithm.LEAKY_BUCKET && random.nextBoolean()) {
      b.maxWait(Duration.ofNanos(1000L * random.nextInt(20_000)));
    }
    if (random.nextInt(4) == 0) {
      b.override(new KeyOverride(List.of("vip:*"), windows()));
    }
    if (random.nextInt(6) == 0) {
      b.shadow(true);
    }
    return b.build();
  }

  /** One to three windows; periods in whole microseconds. */
  private List<Window> windows() {
    int n = 1 + random.nextInt(3);
    List<Window> ws = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long limit = 1 + random.nextInt(i == 0 ? profile.maxLimit() : Math.max(1, profile.maxLimit() / 2));
      long periodMicros = 300 + random.nextInt(profile.maxPeriodMicros());
      if (i == 0 && profile.longPeriodMicros() > 0) {
        periodMicros = profile.longPeriodMicros() - random.nextInt(profile.maxPeriodMicros());
      }
      ws.add(new Window(limit, Duration.ofNanos(periodMicros * 1000)));
    }
    return ws;
  }

  /**
   * The next request: time moves forward by up to the profile's step (now and then by nothing,
   * one time in 20 backwards by up to 2 ms, and now and then by a jump); one to three distinct
   * (rule, key) items, costs now and then larger than some limit.
   */
  Batch next() {
    int step = random.nextInt(20);
    if (step == 0) {
      now -= random.nextInt(2000);
    } else if (step > 3) {
      now += random.nextInt(profile.maxStepMicros());
    }
    if (profile.jumpEvery() > 0 && random.nextInt(profile.jumpEvery()) == 0) {
      now += profile.jumpMicros();
    }
    int n = 1 + (random.nextInt(3) == 0 ? random.nextInt(3) : 0);
    List<ResolvedItem> items = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    while (items.size() < n) {
      Rule r = rules.get(random.nextInt(rules.size()));
      String k = keys.get(random.nextInt(keys.size()));
      if (!seen.add(r.name() + "|" + k)) {
        continue;
      }
      long cost = random.nextInt(10) == 0 ? random.nextInt(profile.maxLimit() + 3) : random.nextInt(profile.maxCost());
      items.add(new ResolvedItem(r, k, cost, r.windowsFor(k)));
    }
    return new Batch(items, now);
  }
}
