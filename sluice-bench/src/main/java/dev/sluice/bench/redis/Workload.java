package dev.sluice.bench.redis;

import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What a mode of the load run asks: which rule, and over how many keys. The real rule on a hot key
 * is denied almost always, so that mode measures denials; the admitting rule (the same two windows
 * with limits 100,000 times larger) makes every decision a write, which is where optimistic
 * compare-and-swap clients contend.
 */
public record Workload(String name, List<Limit> limits, boolean hot) {

  /** {@code limit} per {@code period}. */
  public record Limit(long limit, Duration period) {
    @Override
    public String toString() {
      return String.format(Locale.ROOT, "%,d/%ds", limit, period.toSeconds());
    }
  }

  static final List<Limit> REAL = List.of(new Limit(20, Duration.ofSeconds(60)), new Limit(5, Duration.ofSeconds(3)));
  static final List<Limit> ADMITTING =
      List.of(new Limit(2_000_000, Duration.ofSeconds(60)), new Limit(500_000, Duration.ofSeconds(3)));

  static final List<String> NAMES = List.of("keys", "hot", "keys-admitting", "hot-admitting");

  /** @throws IllegalArgumentException naming the known modes */
  static Workload named(String name) {
    return switch (name) {
      case "keys" -> new Workload(name, REAL, false);
      case "hot" -> new Workload(name, REAL, true);
      case "keys-admitting" -> new Workload(name, ADMITTING, false);
      case "hot-admitting" -> new Workload(name, ADMITTING, true);
      default -> throw new IllegalArgumentException("unknown mode '" + name + "'; known: " + String.join(",", NAMES));
    };
  }

  String rule() {
    return limits.get(0) + " + " + limits.get(1);
  }
}
