package dev.sluice.memory;

import dev.sluice.policy.PolicyFullException;
import dev.sluice.StoreException;
import dev.sluice.Ticker;
import dev.sluice.spi.PolicyChanges;
import dev.sluice.spi.PolicyKind;
import dev.sluice.spi.PolicyRecord;
import dev.sluice.spi.DenialSketches;
import dev.sluice.spi.Membership;
import dev.sluice.spi.PolicyRecords;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;
import java.util.function.BinaryOperator;

/**
 * The memory store's policies: records in sorted maps under one lock (policies change seldom;
 * decisions read the limiter's cache of them, never this), a version, the last
 * {@value #MAX_CHANGES} changes, and denial sketches per (rule, minute) for
 * {@value #SKETCH_MINUTES} minutes. Every answer is a completed stage.
 *
 * <p>Records expire on the store's {@link Ticker}: an expired record is removed (and its removal
 * logged as a change, with a new version) by the next call that reads or writes records.
 * {@link #currentVersion()}, which limiters read on every decision, does not look at the clock:
 * a limiter checks the expiry of the bans it caches by itself.
 *
 * <p>Bounds: records of all kinds hold at most {@link #maxBytes()} bytes of heap, counted with
 * the copy a limiter caches ({@link PolicyBytes#inProcess}), and are at most {@value
 * #MAX_RECORDS}; a put beyond fails with {@link PolicyFullException} naming the bound, a record
 * larger than the whole bound with {@link IllegalArgumentException}; the change log, and for sketches at most {@value #MAX_SKETCH_RULES}
 * rules, {@value #MAX_SKETCHES_PER_MINUTE} unmerged sketches of {@value #MAX_SKETCH_CHARS} chars
 * per (rule, minute).
 *
 * <p>The decision side of bans and audit belongs to the {@link MemoryStore} this store belongs to;
 * it registers a {@link BanListener}, told of every {@link PolicyKind#BAN} put or removed
 * ({@link #onBanPut}, {@link #onBanRemoved}), and an audit source that {@link #audit} reads.
 */
public final class MemoryPolicyStore implements PolicyRecords, DenialSketches, Membership {
  public static final int MAX_RECORDS = 1_000_000;
  public static final int MAX_CHANGES = 10_000;
  public static final int SKETCH_MINUTES = 60;
  public static final int MAX_SKETCH_RULES = 10_000;
  public static final int MAX_SKETCHES_PER_MINUTE = 120;
  public static final int MAX_SKETCH_CHARS = 1 << 16;

  /** Told of bans put and lifted through this store, to apply them in decisions. */
  interface BanListener {
    void banned(String rule, String key, long untilMicros);

    void lifted(String rule, String key);
  }

  /** Code point order, which is the order of UTF-8 bytes. */
  static final Comparator<String> UTF8_ORDER = MemoryPolicyStore::compareUtf8;

  private record Change(long version, PolicyKind kind, String cursor) {}

  private record Expiry(long atMillis, PolicyKind kind, String cursor) implements Comparable<Expiry> {
    @Override
    public int compareTo(Expiry o) {
      int c = Long.compare(atMillis, o.atMillis);
      if (c == 0) {
        c = kind.compareTo(o.kind);
      }
      return c != 0 ? c : compareUtf8(cursor, o.cursor);
    }
  }

  private final Ticker ticker;
  private final EnumMap<PolicyKind, TreeMap<String, PolicyRecord>> records = new EnumMap<>(PolicyKind.class);
  private final TreeSet<Expiry> expiries = new TreeSet<>();
  private final ArrayDeque<Change> changes = new ArrayDeque<>();
  private int size;
  private final long maxBytes;
  /** Bytes of the records held, as {@link PolicyBytes#inProcess} counts them. */
  private long bytes;
  /** Written under the lock; read without it by {@link #currentVersion()}. */
  private volatile long version;
  /** A reader at a version below this one has missed changes no longer logged. */
  private long oldestReadable;
  private final Map<String, TreeMap<Long, List<String>>> denials = new HashMap<>();
  /** Instances by their last heartbeat, ms: those within a heartbeat's ttl, at most. */
  private final Map<String, Long> instances = new HashMap<>();
  private BinaryOperator<String> denialMerge;
  private volatile BanListener banListener;
  private volatile BiFunction<String, String, List<String>> auditSource;

  /** With a sixteenth of the maximum heap for records: a quarter of the memory store's default bytes. */
  public MemoryPolicyStore(Ticker ticker) {
    this(ticker, Runtime.getRuntime().maxMemory() / 16);
  }

  /** @param maxBytes the most heap bytes records may hold, with a limiter's copy of them */
  public MemoryPolicyStore(Ticker ticker, long maxBytes) {
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    if (maxBytes < 1) {
      throw new IllegalArgumentException("maxBytes must be >= 1, was " + maxBytes);
    }
    this.maxBytes = maxBytes;
    for (PolicyKind k : PolicyKind.values()) {
      records.put(k, new TreeMap<>(UTF8_ORDER));
    }
  }

  /**
   * Merges the sketches given to {@link #addDenials} for one (rule, minute) into one with
   * {@code merge}; without it (the default) they are kept side by side, at most
   * {@value #MAX_SKETCHES_PER_MINUTE}, and merged by their reader.
   */
  public synchronized MemoryPolicyStore denialMerge(BinaryOperator<String> merge) {
    this.denialMerge = merge;
    return this;
  }

  /** The current version, read without a lock or the clock: what a limiter checks on each decision. */
  public long currentVersion() {
    return version;
  }

  /** Registers the listener told of {@link PolicyKind#BAN} records put and removed (one; null: none). */
  void banListener(BanListener l) {
    this.banListener = l;
  }

  /** Registers what {@link #audit} reads: (rule, key) → values, newest first. */
  void auditSource(BiFunction<String, String, List<String>> source) {
    this.auditSource = source;
  }

  /** A ban record was put: the key is banned in decisions until {@code untilMicros}. */
  void onBanPut(String rule, String key, long untilMicros) {
    BanListener l = banListener;
    if (l != null) {
      l.banned(rule, key, untilMicros);
    }
  }

  /** A ban was removed (record or not): the key's ban and counted denials are forgotten. */
  void onBanRemoved(String rule, String key) {
    BanListener l = banListener;
    if (l != null) {
      l.lifted(rule, key);
    }
  }

  @Override
  public CompletionStage<Long> put(PolicyRecord record) {
    Objects.requireNonNull(record, "record");
    long v;
    synchronized (this) {
      long now = nowMillis();
      expire(now);
      if (record.expiresAtMillis() != 0 && record.expiresAtMillis() <= now) {
        return CompletableFuture.failedFuture(new IllegalArgumentException("the record's expiry is not in the future"));
      }
      String cursor = record.cursor();
      TreeMap<String, PolicyRecord> m = records.get(record.kind());
      PolicyRecord old = m.get(cursor);
      if (old == null && size >= MAX_RECORDS) {
        return CompletableFuture.failedFuture(new PolicyFullException("the memory store holds " + MAX_RECORDS
            + " policy records, its maximum; remove some before adding more"));
      }
      long b = PolicyBytes.inProcess(record);
      if (b > maxBytes) {
        return CompletableFuture.failedFuture(new IllegalArgumentException("the record takes about " + b
            + " bytes, more than all policy records of the memory store may hold (" + maxBytes + " bytes)"));
      }
      long freed = old == null ? 0 : PolicyBytes.inProcess(old);
      if (bytes - freed + b > maxBytes) {
        return CompletableFuture.failedFuture(new PolicyFullException("the memory store's policy records hold "
            + bytes + " of their " + maxBytes + " bytes (a quarter of the store's bytes, --max-store-bytes), and this "
            + "one takes about " + b + "; remove some (or let bans expire) before adding more"));
      }
      bytes += b - freed;
      if (old != null && old.expiresAtMillis() != 0) {
        expiries.remove(new Expiry(old.expiresAtMillis(), old.kind(), cursor));
      }
      if (old == null) {
        size++;
      }
      m.put(cursor, record);
      if (record.expiresAtMillis() != 0) {
        expiries.add(new Expiry(record.expiresAtMillis(), record.kind(), cursor));
      }
      v = logChange(record.kind(), cursor);
    }
    if (record.kind() == PolicyKind.BAN) {
      onBanPut(record.rule(), record.key(), record.expiresAtMillis() == 0 ? Long.MAX_VALUE
          : Math.multiplyExact(record.expiresAtMillis(), 1000L));
    }
    return CompletableFuture.completedFuture(v);
  }

  @Override
  public CompletionStage<Boolean> remove(PolicyKind kind, String rule, String key) {
    boolean had;
    synchronized (this) {
      expire(nowMillis());
      had = removeRecord(kind, rule + ' ' + key);
    }
    if (kind == PolicyKind.BAN) {
      onBanRemoved(rule, key);
    }
    return CompletableFuture.completedFuture(had);
  }

  @Override
  public synchronized CompletionStage<Optional<PolicyRecord>> get(PolicyKind kind, String rule, String key) {
    expire(nowMillis());
    return CompletableFuture.completedFuture(Optional.ofNullable(records.get(kind).get(rule + ' ' + key)));
  }

  @Override
  public synchronized CompletionStage<List<PolicyRecord>> page(PolicyKind kind, String rule, String after, int count) {
    if (count < 1 || count > MAX_PAGE) {
      return CompletableFuture.failedFuture(new IllegalArgumentException("count must be between 1 and " + MAX_PAGE
          + ", was " + count));
    }
    expire(nowMillis());
    NavigableMap<String, PolicyRecord> m = records.get(kind);
    if (rule != null) {
      // Every cursor of the rule starts with "rule "; ' ' sorts before any character of a rule name.
      m = m.subMap(rule + ' ', true, rule + '!', false);
    }
    if (after != null) {
      m = m.tailMap(after, false);
    }
    List<PolicyRecord> out = new ArrayList<>(Math.min(count, m.size()));
    for (PolicyRecord r : m.values()) {
      if (out.size() == count) {
        break;
      }
      out.add(r);
    }
    return CompletableFuture.completedFuture(out);
  }

  @Override
  public synchronized CompletionStage<Long> version() {
    expire(nowMillis());
    return CompletableFuture.completedFuture(version);
  }

  @Override
  public synchronized CompletionStage<PolicyChanges> changesSince(long since) {
    expire(nowMillis());
    if (since == version) {
      return CompletableFuture.completedFuture(new PolicyChanges(version, true, List.of(), List.of()));
    }
    if (since < oldestReadable || since > version) {
      // Too old for the log, or from a store that is not this one (a restarted process).
      return CompletableFuture.completedFuture(new PolicyChanges(version, false, List.of(), List.of()));
    }
    Map<String, PolicyKind> touched = new LinkedHashMap<>();
    Iterator<Change> it = changes.descendingIterator();
    while (it.hasNext()) {
      Change c = it.next();
      if (c.version <= since) {
        break;
      }
      touched.putIfAbsent(c.kind.name() + ' ' + c.cursor, c.kind);
    }
    List<PolicyRecord> changed = new ArrayList<>();
    List<PolicyRecord> removed = new ArrayList<>();
    touched.forEach((id, kind) -> {
      String cursor = id.substring(kind.name().length() + 1);
      PolicyRecord r = records.get(kind).get(cursor);
      if (r != null) {
        changed.add(r);
      } else {
        int sp = cursor.indexOf(' ');
        removed.add(new PolicyRecord(kind, cursor.substring(0, sp), cursor.substring(sp + 1), "", 0));
      }
    });
    return CompletableFuture.completedFuture(new PolicyChanges(version, true, changed, removed));
  }

  @Override
  public CompletionStage<List<String>> audit(String rule, String key) {
    BiFunction<String, String, List<String>> source = auditSource;
    List<String> values = source == null ? null : source.apply(rule, key);
    return CompletableFuture.completedFuture(values == null ? List.of() : List.copyOf(values));
  }

  @Override
  public synchronized CompletionStage<Void> addDenials(String rule, long minute, String sketch) {
    Objects.requireNonNull(rule, "rule");
    Objects.requireNonNull(sketch, "sketch");
    if (sketch.length() > MAX_SKETCH_CHARS) {
      return CompletableFuture.failedFuture(new IllegalArgumentException("a denial sketch is at most "
          + MAX_SKETCH_CHARS + " characters, was " + sketch.length()));
    }
    long nowMinute = Math.floorDiv(nowMillis(), 60_000L);
    forgetOldDenials(nowMinute);
    if (minute <= nowMinute - SKETCH_MINUTES || minute > nowMinute + 1) {
      return CompletableFuture.completedFuture(null); // outside the hour kept: nobody will read it
    }
    TreeMap<Long, List<String>> byMinute = denials.get(rule);
    if (byMinute == null) {
      if (denials.size() >= MAX_SKETCH_RULES) {
        return CompletableFuture.failedFuture(new StoreException("the memory store keeps denial sketches of at most "
            + MAX_SKETCH_RULES + " rules"));
      }
      byMinute = new TreeMap<>();
      denials.put(rule, byMinute);
    }
    List<String> held = byMinute.computeIfAbsent(minute, m -> new ArrayList<>(1));
    if (denialMerge != null && !held.isEmpty()) {
      held.set(0, denialMerge.apply(held.get(0), sketch));
    } else if (held.size() >= MAX_SKETCHES_PER_MINUTE) {
      return CompletableFuture.failedFuture(new StoreException("the memory store keeps at most "
          + MAX_SKETCHES_PER_MINUTE + " unmerged denial sketches of rule '" + rule + "' per minute"));
    } else {
      held.add(sketch);
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public synchronized CompletionStage<List<String>> denials(String rule, long from, long to) {
    forgetOldDenials(Math.floorDiv(nowMillis(), 60_000L));
    TreeMap<Long, List<String>> byMinute = denials.get(rule);
    if (byMinute == null || from > to) {
      return CompletableFuture.completedFuture(List.of());
    }
    List<String> out = new ArrayList<>();
    byMinute.subMap(from, true, to, true).values().forEach(out::addAll);
    return CompletableFuture.completedFuture(out);
  }

  private void forgetOldDenials(long nowMinute) {
    Iterator<TreeMap<Long, List<String>>> it = denials.values().iterator();
    while (it.hasNext()) {
      TreeMap<Long, List<String>> byMinute = it.next();
      byMinute.headMap(nowMinute - SKETCH_MINUTES, true).clear();
      if (byMinute.isEmpty()) {
        it.remove();
      }
    }
  }

  /** The most heap bytes records may hold, counted with a limiter's copy. */
  public long maxBytes() {
    return maxBytes;
  }

  /** Heap bytes the records held take, counted with a limiter's copy (expired ones not yet removed included). */
  public synchronized long bytes() {
    return bytes;
  }

  /** Records held, of every kind (expired ones not yet removed included). */
  public synchronized int size() {
    return size;
  }

  @Override
  public synchronized CompletionStage<Integer> heartbeat(String instance, long ttlMillis) {
    Objects.requireNonNull(instance, "instance");
    long now = nowMillis();
    instances.put(instance, now);
    instances.values().removeIf(last -> last <= now - ttlMillis);
    return CompletableFuture.completedFuture(instances.size());
  }

  @Override
  public synchronized CompletionStage<Members> members(long ttlMillis, int max) {
    if (ttlMillis < 1 || max < 1) {
      return CompletableFuture.failedFuture(new IllegalArgumentException(
          "ttl and max must be >= 1, were " + ttlMillis + " and " + max));
    }
    long now = nowMillis();
    List<Member> heard = new ArrayList<>();
    for (Map.Entry<String, Long> e : instances.entrySet()) {
      if (e.getValue() > now - ttlMillis) {
        heard.add(new Member(e.getKey(), e.getValue()));
      }
    }
    heard.sort(Comparator.comparingLong(Member::lastSeenMillis).reversed().thenComparing(Member::instance));
    return CompletableFuture.completedFuture(new Members(now, heard.size(), heard.subList(0, Math.min(max,
        heard.size()))));
  }

  @Override
  public synchronized CompletionStage<Void> leave(String instance) {
    instances.remove(instance);
    return CompletableFuture.completedFuture(null);
  }

  private long nowMillis() {
    return Math.floorDiv(ticker.nowMicros(), 1000L);
  }

  private boolean removeRecord(PolicyKind kind, String cursor) {
    PolicyRecord old = records.get(kind).remove(cursor);
    if (old == null) {
      return false;
    }
    size--;
    bytes -= PolicyBytes.inProcess(old);
    if (old.expiresAtMillis() != 0) {
      expiries.remove(new Expiry(old.expiresAtMillis(), kind, cursor));
    }
    logChange(kind, cursor);
    return true;
  }

  /** Removes the records expired at {@code nowMillis}, each a change. */
  private void expire(long nowMillis) {
    while (!expiries.isEmpty() && expiries.first().atMillis <= nowMillis) {
      Expiry e = expiries.pollFirst();
      removeRecord(e.kind, e.cursor);
    }
  }

  private long logChange(PolicyKind kind, String cursor) {
    long v = version + 1;
    changes.addLast(new Change(v, kind, cursor));
    if (changes.size() > MAX_CHANGES) {
      oldestReadable = changes.removeFirst().version;
    }
    version = v;
    return v;
  }

  static int compareUtf8(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) {
        return Integer.compare(ca, cb);
      }
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }
}
