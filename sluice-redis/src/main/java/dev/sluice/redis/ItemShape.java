package dev.sluice.redis;

import dev.sluice.BanPolicy;
import dev.sluice.KeyOverride;
import dev.sluice.Rule;
import dev.sluice.UnsupportedRuleException;
import dev.sluice.Window;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;

/**
 * An item's script argument, a JSON array of integers (one argument that the script decodes with
 * one {@code cjson.decode}, about half the server's cost of a separate argument per number):
 * algorithm code, cost, fresh time ({@code false}: none), shadow flag, the fingerprint values are
 * written with (the rule's own for a key's own windows under the definition, else {@link
 * #fingerprint(int, List)} of the rule and the item's windows), window count, one
 * algorithm-specific number, the store's TTL slack in milliseconds, the rule's own fingerprint,
 * and per window limit, period and the numbers the algorithm derives from them (none, one or
 * two); for other windows than the key's own (a live limit), then the key's own (count, then
 * limit and period of each), under which a value with the rule's own fingerprint was written
 * (carry.lua converts it); for a rule that bans or audits, then the ban's after, within and for
 * (µs; zeros for none) and the audit's keep (0 for none). Everything
 * but cost and fresh time is fixed by the store, rule and windows, encoded once and validated
 * against what the script's double-precision arithmetic represents exactly. The script decodes
 * an argument once and keeps it, so the few distinct arguments of a rule cost one lookup.
 */
final class ItemShape {
  /** Explicit times must lie within ±2^52 µs of the epoch (about ±142 years). */
  static final long MAX_TIME = 1L << 52;
  /** Periods, limits and max_wait up to 2^50 (µs: about 35 years): sums with times stay below 2^53. */
  static final long MAX_PERIOD = 1L << 50;
  static final long MAX_LIMIT = 1L << 50;
  /** The fresh time of a rule whose state is never too old. */
  static final byte[] NO_FRESH_BOUND = ascii("false");

  /** {@code [code,} */
  private final byte[] head;
  /** {@code ,shadow,fingerprint,n,extra,limit,period,…]} */
  private final byte[] tail;

  private ItemShape(byte[] head, byte[] tail) {
    this.head = head;
    this.tail = tail;
  }

  /** The argument for one item: {@code fresh} is {@link #NO_FRESH_BOUND} or an integer's digits. */
  byte[] encode(long cost, byte[] fresh) {
    byte[] b = new byte[head.length + digits(cost) + 1 + fresh.length + tail.length];
    System.arraycopy(head, 0, b, 0, head.length);
    int at = write(b, head.length, cost);
    b[at++] = ',';
    System.arraycopy(fresh, 0, b, at, fresh.length);
    System.arraycopy(tail, 0, b, at + fresh.length, tail.length);
    return b;
  }

  /**
   * Refuses a rule whose windows (its own, or any override's) or max_wait the Redis store cannot
   * decide.
   *
   * @throws UnsupportedRuleException naming the rule, the window and the store's maximum
   */
  static void check(Rule rule) {
    check(rule, null, rule.windows());
    for (KeyOverride o : rule.overrides()) {
      check(rule, o, o.windows());
    }
  }

  /** {@link #check(Rule)} for one list of windows: the rule's ({@code override} null) or an override's. */
  private static void check(Rule rule, KeyOverride override, List<Window> windows) {
    for (Window w : windows) {
      if (w.periodMicros() > MAX_PERIOD) {
        throw UnsupportedRuleException.window(rule, override, w, "the Redis store supports periods up to "
            + MAX_PERIOD + " µs (2^50, about 35 years)");
      }
      if (w.limit() > MAX_LIMIT) {
        throw UnsupportedRuleException.window(rule, override, w, "the Redis store supports limits up to "
            + MAX_LIMIT + " (2^50)");
      }
    }
    ScriptAlgorithm.of(rule.algorithm()).check(rule, override, windows);
  }

  /** The override whose windows {@code windows} are, or null: the rule's own. */
  private static KeyOverride overrideOf(Rule rule, List<Window> windows) {
    if (windows.equals(rule.windows())) {
      return null;
    }
    for (KeyOverride o : rule.overrides()) {
      if (o.windows().equals(windows)) {
        return o;
      }
    }
    return null;
  }

  /**
   * The shape of the items of {@code rule} whose windows are {@code windows}.
   *
   * @throws UnsupportedRuleException if a window or max_wait is beyond what the Redis store
   *     supports (the limiter refuses such rules before they are used: see {@link #check(Rule)})
   */
  /**
   * The shape of the items of {@code rule} whose windows are {@code windows}, for keys whose own
   * windows under the rule's definition are {@code own} when {@code windows} are others (a live
   * limit), or null when they are the key's own.
   */
  static ItemShape of(Rule rule, List<Window> windows, List<Window> own, int fingerprint, long ttlSlackMillis) {
    check(rule, overrideOf(rule, windows), windows);
    ScriptAlgorithm algorithm = ScriptAlgorithm.of(rule.algorithm());
    long extra = algorithm.extra(rule, windows);
    StringBuilder t = new StringBuilder();
    int written = own == null ? fingerprint : fingerprint(fingerprint, windows);
    t.append(',').append(rule.shadow()).append(',').append(Integer.toUnsignedLong(written))
        .append(',').append(windows.size()).append(',').append(extra).append(',').append(ttlSlackMillis)
        .append(',').append(Integer.toUnsignedLong(fingerprint));
    // Per window: limit, period, then only the numbers the algorithm uses, derived by the
    // algorithm's class as for the memory store.
    for (Window w : windows) {
      t.append(',').append(w.limit()).append(',').append(w.periodMicros());
      algorithm.perWindow(t, rule, w);
    }
    if (own != null) {
      t.append(',').append(own.size());
      for (Window w : own) {
        t.append(',').append(w.limit()).append(',').append(w.periodMicros());
      }
    }
    if (rule.ban() != null || rule.audit() != null) {
      // Only rules that ban or audit carry these (see policies.lua): others' arguments are unchanged.
      BanPolicy ban = rule.ban();
      t.append(',').append(ban == null ? 0 : ban.after())
          .append(',').append(ban == null ? 0 : ban.within().toNanos() / 1000)
          .append(',').append(ban == null ? 0 : ban.duration().toNanos() / 1000)
          .append(',').append(rule.audit() == null ? 0 : rule.audit().keep());
    }
    t.append(']');
    return new ItemShape(ascii("[" + algorithm.code + ","), ascii(t.toString()));
  }

  static byte[] num(long v) {
    return Long.toString(v).getBytes(StandardCharsets.US_ASCII);
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * A JSON array of the integers in {@code values} (an undo record, as the script returned it).
   * Not JSON for clients: a script argument that the refund path reads with {@code cjson.decode},
   * built from integers only, so there is nothing to escape and no need for a JSON library.
   */
  static byte[] jsonArray(List<?> values) {
    int length = 2;
    for (int i = 0; i < values.size(); i++) {
      length += digits(num(values, i)) + (i > 0 ? 1 : 0);
    }
    byte[] b = new byte[length];
    b[0] = '[';
    int at = 1;
    for (int i = 0; i < values.size(); i++) {
      if (i > 0) {
        b[at++] = ',';
      }
      at = write(b, at, num(values, i));
    }
    b[at] = ']';
    return b;
  }

  private static long num(List<?> list, int i) {
    Object o = list.get(i);
    if (!(o instanceof Long)) {
      throw new IllegalStateException("undo record element " + i + " is " + o + ", expected an integer");
    }
    return (Long) o;
  }

  /** Characters of {@code v} in decimal. */
  static int digits(long v) {
    if (v < 0) {
      return v == Long.MIN_VALUE ? 20 : 1 + digits(-v);
    }
    int n = 1;
    for (long x = v; x >= 10; x /= 10) {
      n++;
    }
    return n;
  }

  /** Writes {@code v} in decimal at {@code at}; returns the position after it. */
  static int write(byte[] b, int at, long v) {
    if (v == Long.MIN_VALUE) {
      byte[] s = ascii(Long.toString(v));
      System.arraycopy(s, 0, b, at, s.length);
      return at + s.length;
    }
    if (v < 0) {
      b[at++] = '-';
      v = -v;
    }
    int end = at + digits(v);
    for (int i = end - 1; i >= at; i--) {
      b[i] = (byte) ('0' + v % 10);
      v /= 10;
    }
    return end;
  }

  /**
   * 32 bits of SHA-256 over everything that makes two rules unequal (as {@link Rule#equals}):
   * state written under one definition is not read under another, as in the memory store.
   */
  static int fingerprint(Rule rule) {
    StringBuilder b = new StringBuilder();
    b.append(rule.name()).append('\n').append(rule.algorithm().configName()).append('\n');
    b.append(ScriptAlgorithm.of(rule.algorithm()).fingerprint());
    windows(b, rule.windows());
    b.append("max_wait=").append(rule.hasExplicitMaxWait() ? rule.maxWait().toNanos() : "default").append('\n');
    b.append("precision=").append(rule.precision()).append('\n');
    for (KeyOverride o : rule.overrides()) {
      b.append("override=").append(String.join("\u0000", o.keys())).append('\n');
      windows(b, o.windows());
    }
    b.append("shadow=").append(rule.shadow()).append('\n');
    b.append("failure_mode=").append(rule.failureMode()).append('\n');
    return sha256(b);
  }

  /**
   * 32 bits of SHA-256 over the rule's fingerprint and {@code windows}, a key's windows other
   * than its own under the rule's definition: the fingerprint in the header of the values
   * written under them, so that a value other windows wrote is never read as current state
   * (carry.lua converts it).
   */
  static int fingerprint(int ruleFingerprint, List<Window> windows) {
    StringBuilder b = new StringBuilder();
    b.append(Integer.toUnsignedString(ruleFingerprint)).append('\n');
    windows(b, windows);
    int fp = sha256(b);
    // Never the rule's own: that one says a value was written under the rule's own windows.
    return fp == ruleFingerprint ? fp ^ 1 : fp;
  }

  private static int sha256(StringBuilder b) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(b.toString().getBytes(StandardCharsets.UTF_8));
      return (d[0] & 0xff) << 24 | (d[1] & 0xff) << 16 | (d[2] & 0xff) << 8 | (d[3] & 0xff);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is unavailable", e);
    }
  }

  private static void windows(StringBuilder b, List<Window> ws) {
    for (Window w : ws) {
      b.append(w.limit()).append('/').append(w.periodMicros()).append('\n');
    }
  }
}
