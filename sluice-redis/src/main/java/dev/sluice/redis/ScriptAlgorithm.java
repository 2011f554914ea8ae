package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.KeyOverride;
import dev.sluice.Rule;
import dev.sluice.UnsupportedRuleException;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.algorithm.LeakyBucket;
import dev.sluice.algorithm.SlidingLog;
import dev.sluice.algorithm.SlidingWindow;
import dev.sluice.algorithm.TokenBucket;
import dev.sluice.spi.ResolvedItem;
import java.util.List;

/**
 * The Redis store's table of algorithms, one entry each: its code and script files (the Lua
 * side's table is {@code ALGORITHMS} in {@code requests.lua}, indexed by the code), the numbers
 * its item argument carries ({@link ItemShape}), what the store refuses of its rules, and, for an
 * algorithm whose one-item decisions the script reports by the key's value, the reading of that
 * value ({@link Replies}). The arithmetic is the algorithm's class in {@code dev.sluice.algorithm},
 * shared with the memory store; the value's byte layout is here.
 */
enum ScriptAlgorithm {
  SLIDING_LOG(Algorithm.SLIDING_LOG, 1, "sliding_log_ring.lua", "sliding_log_large.lua", "sliding_log.lua") {
    @Override
    long extra(Rule rule, List<Window> windows) {
      return slotWidth(longest(windows));
    }

    @Override
    void check(Rule rule, KeyOverride override, List<Window> windows) {
      for (Window w : windows) {
        SlidingLog.checkLimit(rule, override, w, LOG_MAX_LIMIT, "the Redis store's");
      }
    }

    @Override
    String fingerprint() {
      // The value's layout: values another layout wrote are treated as absent, not misread.
      return "layout=" + LOG_LAYOUT + "\n";
    }

    /**
     * The value is the header (fingerprint, latest time, base, head, size, seq) and a ring of
     * slots, each a unit's time less base; the newest unit is in the slot before head. A value of
     * other windows than the key's own under the rule (a live limit) ends with {@link
     * #LOG_TRAILER} more bytes.
     */
    @Override
    List<WindowState> report(ResolvedItem item, boolean allowed, byte[] b, int from, int length, long now) {
      int width = slotWidth(longest(item.windows()));
      List<Window> own = item.rule().windowsFor(item.key());
      if (item.windows() != own && !item.windows().equals(own)) {
        length -= LOG_TRAILER;
      }
      if (length < LOG_HEADER + width || (length - LOG_HEADER) % width != 0) {
        throw new IllegalArgumentException("a sliding_log value of " + length + " bytes");
      }
      long len = (length - LOG_HEADER) / width;
      long head = StoredValue.uint32(b, from + 20);
      long size = StoredValue.uint32(b, from + 24);
      if (size > len || head >= len) {
        throw new IllegalArgumentException("a sliding_log value holding " + size + " units at " + head + " in " + len
            + " slots");
      }
      long base = StoredValue.int64(b, from + 12);
      // The units, oldest first, as the memory store's log keeps them.
      long[] units = new long[(int) size];
      for (int k = 1; k <= size; k++) {
        int at = from + LOG_HEADER + (int) Math.floorMod(head - k, len) * width;
        long slot = width == 4 ? StoredValue.uint32(b, at)
            : width == 6 ? StoredValue.uint48(b, at) : StoredValue.int64(b, at);
        units[(int) size - k] = base + slot;
      }
      return SlidingLog.holding(item.windows(), units)
          .reportStored(StoredValue.last(b, from), now, item.cost(), allowed);
    }
  },

  SLIDING_WINDOW(Algorithm.SLIDING_WINDOW, 2, "sliding_window.lua") {
    /** For carry.lua: the buckets of windows the item does not have. */
    @Override
    long extra(Rule rule, List<Window> windows) {
      return rule.precision();
    }

    @Override
    void perWindow(StringBuilder argument, Rule rule, Window w) {
      long width = SlidingWindow.bucketWidth(w.periodMicros(), rule.precision());
      argument.append(',').append(width).append(',').append(SlidingWindow.bucketCount(w.periodMicros(), width));
    }
  },

  FIXED_WINDOW(Algorithm.FIXED_WINDOW, 3, "fixed_window.lua"),

  TOKEN_BUCKET(Algorithm.TOKEN_BUCKET, 4, "token_bucket.lua") {
    @Override
    void perWindow(StringBuilder argument, Rule rule, Window w) {
      argument.append(',').append(TokenBucket.emissionInterval(w.limit(), w.periodMicros()));
    }

    /**
     * The value is the header, each window's TAT as an int64, then for other windows than the
     * rule's own those windows ({@link StoredValue#trailer}).
     */
    @Override
    List<WindowState> report(ResolvedItem item, boolean allowed, byte[] b, int from, int length, long now) {
      List<Window> windows = item.windows();
      int fields = StoredValue.HEADER + 8 * windows.size();
      if (length != fields && length != fields + StoredValue.trailer(windows.size())) {
        throw new IllegalArgumentException("a token_bucket value of " + length + " bytes for " + windows.size()
            + " windows");
      }
      long[] tat = new long[windows.size()];
      for (int i = 0; i < tat.length; i++) {
        tat[i] = StoredValue.int64(b, from + StoredValue.HEADER + 8 * i);
      }
      return TokenBucket.withArrivals(windows, tat).reportStored(StoredValue.last(b, from), now, item.cost(), allowed);
    }
  },

  LEAKY_BUCKET(Algorithm.LEAKY_BUCKET, 5, "leaky_bucket.lua") {
    @Override
    long extra(Rule rule, List<Window> windows) {
      return LeakyBucket.maxWaitMicros(rule, windows);
    }

    @Override
    void perWindow(StringBuilder argument, Rule rule, Window w) {
      argument.append(',').append(TokenBucket.emissionInterval(w.limit(), w.periodMicros()));
    }

    @Override
    void check(Rule rule, KeyOverride override, List<Window> windows) {
      if (LeakyBucket.maxWaitMicros(rule, windows) > ItemShape.MAX_PERIOD) {
        throw new UnsupportedRuleException(rule.name(), UnsupportedRuleException.where(rule, override) + ": max_wait "
            + rule.maxWaitFor(windows) + ": the Redis store supports max_wait up to " + ItemShape.MAX_PERIOD
            + " µs (2^50)");
      }
    }
  };

  /** The largest limit of a sliding_log window: a log of 10^7 units is a 60 MB string. */
  static final long LOG_MAX_LIMIT = 10_000_000;
  /**
   * The version of the sliding_log value's layout, part of the rule's fingerprint, so that values
   * of another layout are treated as absent, not misread.
   */
  static final int LOG_LAYOUT = 3;
  /** The sliding_log value's header: fingerprint, latest time, base, head, size, seq. */
  private static final int LOG_HEADER = 36;
  /**
   * What a sliding_log value written under other windows than its key's own (a live limit) ends
   * with: the windows' longest period, the header's size and the rule's own fingerprint, for a
   * conversion to yet other windows.
   */
  private static final int LOG_TRAILER = 14;
  /**
   * Slots of 4 bytes reach 2^32 µs (71 minutes) from their base, which moves up when now
   * outgrows them: periods up to 2^31 µs get them, so the base moves at most every 35 minutes.
   */
  private static final long FOUR_BYTE_PERIOD = 1L << 31;
  /** Slots of 6 bytes reach 2^48 µs from their base; periods up to 2^46 µs get them, longer ones 8 bytes. */
  private static final long SIX_BYTE_PERIOD = 1L << 46;

  private static final ScriptAlgorithm[] BY_ALGORITHM = new ScriptAlgorithm[Algorithm.values().length];

  static {
    for (ScriptAlgorithm a : values()) {
      BY_ALGORITHM[a.algorithm.ordinal()] = a;
    }
  }

  private final Algorithm algorithm;
  /** The index of the algorithm's table in {@code ALGORITHMS} (requests.lua); the argument's first number. */
  final int code;
  /** Its script files, in the order they are assembled. */
  final List<String> scripts;

  ScriptAlgorithm(Algorithm algorithm, int code, String... scripts) {
    this.algorithm = algorithm;
    this.code = code;
    this.scripts = List.of(scripts);
  }

  /** @throws IllegalStateException if the Redis store has no script for {@code a} */
  static ScriptAlgorithm of(Algorithm a) {
    ScriptAlgorithm s = BY_ALGORITHM[a.ordinal()];
    if (s == null) {
      throw new IllegalStateException("no script for algorithm " + a);
    }
    return s;
  }

  /** The one algorithm-specific number of the item argument of {@code rule}'s items of {@code windows}. */
  long extra(Rule rule, List<Window> windows) {
    return 0;
  }

  /**
   * Appends the numbers the algorithm derives from window {@code w} after its limit and period
   * (none, one or two; read_item in items.lua): each costs the server a conversion on every call.
   */
  void perWindow(StringBuilder argument, Rule rule, Window w) {}

  /**
   * Refuses what the Redis store cannot decide of {@code rule}'s {@code windows} (its own, or
   * {@code override}'s) beyond the bounds of every algorithm ({@link ItemShape#check}).
   *
   * @throws UnsupportedRuleException naming the rule, the window and the store's maximum
   */
  void check(Rule rule, KeyOverride override, List<Window> windows) {}

  /** What the rule's fingerprint adds for this algorithm (see {@link ItemShape#fingerprint(Rule)}). */
  String fingerprint() {
    return "";
  }

  /**
   * The report of a one-item decision on {@code item} from the key's value as the script decided
   * it at {@code now} ({@code length} bytes of {@code b} at {@code from}): the value written by an
   * admission, or read by a denial, loaded into the algorithm's memory state, which reports on it
   * as the memory store reports on its own.
   *
   * @throws IllegalArgumentException if those bytes are not such a value for the item's windows
   * @throws MalformedReplyException if the script never reports this algorithm by its value
   */
  List<WindowState> report(ResolvedItem item, boolean allowed, byte[] b, int from, int length, long now) {
    throw new MalformedReplyException("script reported a " + algorithm.configName() + " decision by its value");
  }

  /**
   * The bytes of a stored sliding_log slot for windows whose longest period is {@code longest}
   * µs: as few as keep the base from moving often, since every byte of a value costs the Redis
   * server on every read and reply. Also the script's argument for the rule (carry.lua's
   * slot_width).
   */
  static int slotWidth(long longest) {
    return longest <= FOUR_BYTE_PERIOD ? 4 : longest <= SIX_BYTE_PERIOD ? 6 : 8;
  }

  private static long longest(List<Window> windows) {
    long longest = 0;
    for (Window w : windows) {
      longest = Math.max(longest, w.periodMicros());
    }
    return longest;
  }
}
