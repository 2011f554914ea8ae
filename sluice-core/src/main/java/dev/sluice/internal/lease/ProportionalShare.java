package dev.sluice.internal.lease;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The sizes a leader publishes, a pure function of what it knows (docs/scaling.md, "Rebalancing:
 * proportional share with a floor"). Per key with budget B: an instance that did not report the
 * key, or has no demand, gets 0; the others a floor of one unit (the coldest 0 when B cannot
 * floor them all) and B − floors in proportion to demand, largest remainders taking the odd units.
 * That target is reached by safe transitions: a shrink at once, a growth only from the units free
 * now, B − Σ max(size published and unexpired, size in use), so that the sizes in use never sum
 * above B while instances adopt the new ones an interval apart.
 *
 * <p>While the leader learns (its first cycles after it won: a size an earlier leader published
 * may have been adopted since an instance's last report) it republishes each instance the size it
 * reports in use and grows no one; an instance not reporting gets 0.
 */
public final class ProportionalShare {
  private ProportionalShare() {}

  /**
   * What an instance reported of one key.
   *
   * @param demand admitted + denied units per second, already averaged; ≥ 0
   * @param inUse the size the instance says it uses; ≥ 0
   */
  public record Usage(double demand, long inUse) {
    public Usage {
      if (!(demand >= 0) || Double.isInfinite(demand)) {
        throw new IllegalArgumentException("demand must be a finite number >= 0, was " + demand);
      }
      if (inUse < 0) {
        throw new IllegalArgumentException("size in use must be >= 0, was " + inUse);
      }
    }
  }

  /**
   * One key as the leader sees it.
   *
   * @param budget B, the units the instances may hold of it together; ≥ 0
   * @param reported by instance, the usage of those that reported the key
   * @param published by instance, the sizes last published and not yet expired
   */
  public record KeyView(long budget, Map<String, Usage> reported, Map<String, Long> published) {
    public KeyView {
      if (budget < 0) {
        throw new IllegalArgumentException("budget must be >= 0, was " + budget);
      }
      reported = Map.copyOf(reported);
      published = Map.copyOf(published);
      published.forEach((id, size) -> {
        if (size < 0) {
          throw new IllegalArgumentException("published size of " + id + " must be >= 0, was " + size);
        }
      });
    }
  }

  /**
   * The sizes to publish per key, per instance: every instance that reported the key or has a
   * size published for it, 0 included.
   */
  public static <K> Map<K, Map<String, Long>> rebalance(Map<K, KeyView> keys, boolean learning) {
    Map<K, Map<String, Long>> out = new LinkedHashMap<>();
    keys.forEach((k, v) -> out.put(k, sizes(v, learning)));
    return out;
  }

  /** One key's sizes, per instance (see the class comment). */
  public static Map<String, Long> sizes(KeyView key, boolean learning) {
    Objects.requireNonNull(key, "key");
    Map<String, Long> out = new TreeMap<>();
    for (String id : key.published().keySet()) {
      out.put(id, 0L);
    }
    if (learning) {
      key.reported().forEach((id, u) -> out.put(id, u.inUse()));
      return out;
    }
    Map<String, Long> target = target(key.budget(), key.reported());
    // Shrinks at once: nobody is above its target, and growers keep what they have for now.
    Map<String, Long> next = new HashMap<>();
    for (String id : union(key)) {
      next.put(id, Math.min(target.getOrDefault(id, 0L), key.published().getOrDefault(id, 0L)));
    }
    // An instance adopts a new size only at its next report: until then it may hold the size
    // published before, so that counts as claimed too.
    long claimed = 0;
    for (String id : next.keySet()) {
      claimed += claim(key, id, next.get(id));
    }
    long free = key.budget() - claimed;
    // Growth from the units free now, the largest shortfalls first.
    List<String> growers = new ArrayList<>();
    for (String id : next.keySet()) {
      if (target.getOrDefault(id, 0L) > next.get(id)) {
        growers.add(id);
      }
    }
    growers.sort(Comparator.<String>comparingLong(id -> next.get(id) - target.get(id)).thenComparing(id -> id));
    for (String id : growers) {
      if (free <= 0) {
        break;
      }
      long now = next.get(id);
      long want = target.get(id);
      long cost = claim(key, id, want) - claim(key, id, now);
      if (cost <= free) {
        next.put(id, want);
        free -= cost;
      } else {
        // Partial: up to what the free units cover beyond what it already claims.
        next.put(id, claim(key, id, now) + free);
        free = 0;
      }
    }
    out.putAll(next);
    return out;
  }

  /**
   * The sizes the safe transitions lead to, once every instance has adopted the last: floors of
   * one unit and the proportional rest (see the class comment). Instances with no demand are left
   * out (size 0).
   */
  public static Map<String, Long> target(long budget, Map<String, Usage> reported) {
    List<String> hot = new ArrayList<>();
    reported.forEach((id, u) -> {
      if (u.demand() > 0) {
        hot.add(id);
      }
    });
    // Hottest first; the coldest lose their floor when B cannot floor them all.
    hot.sort(Comparator.<String>comparingDouble(id -> -reported.get(id).demand()).thenComparing(id -> id));
    if (hot.size() > budget) {
      hot.subList((int) budget, hot.size()).clear();
    }
    Map<String, Long> out = new HashMap<>();
    if (hot.isEmpty()) {
      return out;
    }
    long rest = budget - hot.size();
    double total = 0;
    for (String id : hot) {
      total += reported.get(id).demand();
    }
    long given = 0;
    Map<String, Double> remainders = new HashMap<>();
    for (String id : hot) {
      double exact = rest * (reported.get(id).demand() / total);
      long whole = Math.min(rest, (long) Math.floor(exact));
      out.put(id, 1 + whole);
      given += whole;
      remainders.put(id, exact - whole);
    }
    List<String> byRemainder = new ArrayList<>(hot);
    byRemainder.sort(Comparator.<String>comparingDouble(id -> -remainders.get(id)).thenComparing(id -> id));
    // Floating point may round a share up past its exact value: take such units back, from the
    // smallest remainders, so that the sum never passes B.
    for (int i = byRemainder.size() - 1; given > rest && i >= 0; i--) {
      String id = byRemainder.get(i);
      if (out.get(id) > 1) {
        out.merge(id, -1L, Long::sum);
        given--;
      }
    }
    // Fewer odd units than instances, but rounding may leave one more: at most once around.
    for (int i = 0; given < rest && i < byRemainder.size(); i++) {
      out.merge(byRemainder.get(i), 1L, Long::sum);
      given++;
    }
    return out;
  }

  /**
   * The size an instance uses while no leader publishes: min(last size, ⌊B ÷ (n + 1)⌋) while sizes
   * it read may still be in force elsewhere, ⌊B ÷ (n + 1)⌋ once a lease length has passed since the
   * last publish it saw; n is the count of instances with a report kept (the + 1 leaves room for
   * one joining within an interval).
   */
  public static long evenShare(long lastSize, long budget, int instances, boolean leaseLengthPassed) {
    if (budget < 0 || instances < 0 || lastSize < 0) {
      throw new IllegalArgumentException("budget, instances and last size must be >= 0, were "
          + budget + ", " + instances + ", " + lastSize);
    }
    long even = budget / (instances + 1L);
    return leaseLengthPassed ? even : Math.min(lastSize, even);
  }

  private static List<String> union(KeyView key) {
    List<String> ids = new ArrayList<>(key.reported().keySet());
    for (String id : key.published().keySet()) {
      if (!key.reported().containsKey(id)) {
        ids.add(id);
      }
    }
    return ids;
  }

  private static long inUse(KeyView key, String id) {
    Usage u = key.reported().get(id);
    return u == null ? 0 : u.inUse();
  }

  /** What an instance may hold until it adopts {@code size}: the most of it, its size in use and the one before. */
  private static long claim(KeyView key, String id, long size) {
    return Math.max(size, Math.max(inUse(key, id), key.published().getOrDefault(id, 0L)));
  }
}
