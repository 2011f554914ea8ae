package dev.sluice.internal.policy;

import dev.sluice.policy.ListKind;
import dev.sluice.policy.LiveLimit;
import dev.sluice.policy.PolicyFullException;
import dev.sluice.RuleSet;
import dev.sluice.memory.MemoryPolicyStore;
import dev.sluice.memory.PolicyBytes;
import dev.sluice.spi.PolicyChanges;
import dev.sluice.spi.PolicyKind;
import dev.sluice.spi.PolicyRecord;
import dev.sluice.spi.PolicyRecords;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One limiter's copy of the store's policies (live limits, bans, run-time access lists) and of the
 * configured access lists of the rules in force, read by every decision without a store call.
 *
 * <p>It is read in full at start (paged), then kept current from the store's change feed
 * ({@link PolicyRecords#changesSince}): every {@value #POLL_MILLIS} ms on one daemon thread of its
 * own for a remote store, so a change made through any instance is applied here within about that
 * (well within a second); for the memory store, which is in the same process, synchronously by
 * the first decision after the store's version changed, with no thread. A failed read is logged
 * and retried at the next tick; the policies stay as last read. A change made through this
 * limiter's own {@link dev.sluice.policy.Policies} is applied here at once ({@link #apply}).
 *
 * <p>Bounds: the records held take at most {@code maxBytes} bytes of heap as {@link PolicyBytes}
 * counts them, and are at most {@value #MAX_LIMITS} live limits, {@value #MAX_BANS} bans,
 * {@value #MAX_RULES} rules with policies, and {@link RuleSet#MAX_LIST_ENTRIES} run-time entries
 * per list; what is read beyond is left out (and logged, throttled: {@link PolicyLog}). A change
 * made through this limiter that would not fit is refused before the store is written
 * ({@link #checkRoom}).
 *
 * <p>A store whose version goes back (a Redis restarted empty, or flushed) has lost its
 * records: the next read says once, at WARN, how many this limiter held ({@link PolicyLog#lost}).
 */
public final class PolicyCache implements AutoCloseable {
  static final long POLL_MILLIS = 250;
  static final int PAGE = PolicyRecords.MAX_PAGE;
  static final int MAX_LIMITS = 1_000_000;
  static final int MAX_BANS = 1_000_000;
  static final int MAX_RULES = 10_000;
  /** The default bound on the bytes of records held: an eighth of the maximum heap. */
  static final long DEFAULT_MAX_BYTES = Runtime.getRuntime().maxMemory() / 8;
  /** How long a read of the store may take before the poll gives up on it (and retries). */
  static final long READ_TIMEOUT_MILLIS = 10_000;

  private static final System.Logger LOG = System.getLogger(PolicyCache.class.getName());

  /**
   * The policies of one rule. Bans and limits change in place (concurrent maps); the lists are
   * rebuilt on a change of their entries and replaced.
   */
  public static final class RulePolicies {
    final String rule;
    final ConcurrentHashMap<String, Long> bans = new ConcurrentHashMap<>();
    final ConcurrentHashMap<String, LiveLimit> limits = new ConcurrentHashMap<>();
    final Set<String> runtimeAllow = ConcurrentHashMap.newKeySet();
    final Set<String> runtimeDeny = ConcurrentHashMap.newKeySet();
    volatile AccessList allow = AccessList.empty();
    volatile AccessList deny = AccessList.empty();

    RulePolicies(String rule) {
      this.rule = rule;
    }

    /** Whether any key of the rule is banned (some ban may have ended). */
    public boolean hasBans() {
      return !bans.isEmpty();
    }

    /** Whether the deny list matches {@code key}. */
    public boolean denies(String key) {
      AccessList d = deny;
      return !d.isEmpty() && d.matches(key);
    }

    /** Whether the allow list matches {@code key}. */
    public boolean allows(String key) {
      AccessList a = allow;
      return !a.isEmpty() && a.matches(key);
    }

    /** Milliseconds left of the ban on {@code key} at {@code nowMillis}; 0 if none. */
    public long bannedFor(String key, long nowMillis) {
      if (bans.isEmpty()) {
        return 0;
      }
      Long until = bans.get(key);
      if (until == null) {
        return 0;
      }
      if (until > nowMillis) {
        return until - nowMillis;
      }
      bans.remove(key, until);
      return 0;
    }

    /** The live limit of {@code key}, or null. */
    public LiveLimit limit(String key) {
      return limits.isEmpty() ? null : limits.get(key);
    }
  }

  private final PolicyRecords store;
  /** The memory store's policies, read synchronously; null for a remote store (or none). */
  private final MemoryPolicyStore local;
  private final ScheduledExecutorService poller;
  private final List<Runnable> tickTasks = new java.util.concurrent.CopyOnWriteArrayList<>();
  /** Rules with policies (or configured lists), replaced on a change of its key set. */
  private volatile Map<String, RulePolicies> byRule = Map.of();
  private volatile RuleSet rules;
  /** The store's version that this cache holds. */
  private volatile long seen = -1;
  private final AtomicInteger limitCount = new AtomicInteger();
  private final AtomicInteger banCount = new AtomicInteger();
  private final long maxBytes;
  /** Bytes of the records held ({@link PolicyBytes}); written under this object's lock. */
  private volatile long bytes;
  private final PolicyLog log;
  /** Increased by each change applied from this limiter: a poll read before it must not undo it. */
  private volatile long localEpoch;
  private boolean failing;

  /**
   * @param store the store's policies, null if it keeps none (then only configured lists apply)
   * @param isLocal whether the store answers in process (read synchronously, no thread)
   */
  public PolicyCache(PolicyRecords store, boolean isLocal, RuleSet rules) {
    this(store, isLocal, rules, true, DEFAULT_MAX_BYTES, PolicyLog.quiet());
  }

  PolicyCache(PolicyRecords store, boolean isLocal, RuleSet rules, boolean schedule) {
    this(store, isLocal, rules, schedule, DEFAULT_MAX_BYTES, PolicyLog.quiet());
  }

  /**
   * @param schedule whether a remote store is polled on a thread (else by {@link #pollOnce})
   * @param maxBytes the most bytes of records held
   */
  public PolicyCache(PolicyRecords store, boolean isLocal, RuleSet rules, boolean schedule, long maxBytes, PolicyLog log) {
    this.maxBytes = maxBytes;
    this.log = log;
    this.store = store;
    this.rules = rules;
    this.local = isLocal && store instanceof MemoryPolicyStore m ? m : null;
    rebuildLists(rules, null);
    if (store == null) {
      this.poller = null;
    } else if (local != null) {
      this.poller = null;
      synchronized (this) {
        readAll(localEpoch);
      }
    } else if (!schedule) {
      this.poller = null;
    } else {
      this.poller = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sluice-policies");
        t.setDaemon(true);
        return t;
      });
      poller.scheduleWithFixedDelay(this::poll, 0, POLL_MILLIS, TimeUnit.MILLISECONDS);
    }
  }

  /**
   * The rules with policies, null when no rule has any: the whole cost of the local step for a
   * limiter without policies. On the memory store, first reads what changed since the last call.
   */
  public Map<String, RulePolicies> current() {
    MemoryPolicyStore m = local;
    if (m != null && m.currentVersion() != seen) {
      catchUp();
    }
    Map<String, RulePolicies> b = byRule;
    return b.isEmpty() ? null : b;
  }

  /** The policies of {@code rule}, or null. */
  public RulePolicies of(String rule) {
    Map<String, RulePolicies> b = current();
    return b == null ? null : b.get(rule);
  }

  /** The store's version this cache holds (-1 before the first read). */
  public long version() {
    return seen;
  }

  /** The rules in force changed: their configured lists replace the old ones. */
  public synchronized void rulesChanged(RuleSet next) {
    this.rules = next;
    rebuildLists(next, null);
  }

  /**
   * Caches a ban learned from a decision (the store answered {@link dev.sluice.DenyReason#BANNED});
   * whether it was not known yet (or known to end earlier), so that its record is written once.
   * Like a change made through this limiter, it discards a read of the store begun before it: such
   * a read lacks the ban's record and would drop the ban.
   */
  public synchronized boolean learnBan(String rule, String key, long untilMillis) {
    RulePolicies p = rulePolicies(rule, true);
    if (p == null) {
      return false;
    }
    Long old = p.bans.get(key);
    if (old != null && old >= untilMillis - 1000) {
      return false; // known: the store's answer is rounded to the millisecond and read later
    }
    if (old == null && banCount.get() >= MAX_BANS) {
      full("bans", MAX_BANS);
      return false;
    }
    if (old == null && bytes + PolicyBytes.ban(key) > maxBytes) {
      fullBytes();
      return false;
    }
    localEpoch++;
    if (p.bans.put(key, untilMillis) == null) {
      banCount.incrementAndGet();
      bytes += PolicyBytes.ban(key);
    }
    return true;
  }

  /**
   * Refuses a change to be made through this limiter that this cache could not hold, before the
   * store is written: {@link PolicyFullException} when the records held leave no room for it,
   * {@link IllegalArgumentException} when it is larger than the whole bound.
   */
  public synchronized void checkRoom(PolicyRecord r) {
    long b = PolicyBytes.cached(r);
    if (b > maxBytes) {
      throw new IllegalArgumentException("the record takes about " + b + " bytes, more than this instance's cache of "
          + "policies may hold (" + maxBytes + " bytes)");
    }
    if (bytes - heldBytes(r) + b > maxBytes) {
      throw new PolicyFullException("this instance's cache of the store's policies holds " + bytes + " of its "
          + maxBytes + " bytes (an eighth of the maximum heap, -Xmx, unless the library sets Sluice.Builder.maxPolicyBytes), and this record "
          + "takes about " + b + "; remove some (or let bans expire) before adding more");
    }
  }

  /** The bytes of the record of {@code r}'s kind, rule and key held now (0 if none): a put replaces it. */
  private long heldBytes(PolicyRecord r) {
    RulePolicies p = byRule.get(r.rule());
    if (p == null) {
      return 0;
    }
    return switch (r.kind()) {
      case LIMIT -> {
        LiveLimit l = p.limits.get(r.key());
        yield l == null ? 0 : PolicyBytes.limit(r.key(), l);
      }
      case BAN -> p.bans.containsKey(r.key()) ? PolicyBytes.ban(r.key()) : 0;
      case ALLOW -> p.runtimeAllow.contains(r.key()) ? PolicyBytes.entry(r.key()) : 0;
      case DENY -> p.runtimeDeny.contains(r.key()) ? PolicyBytes.entry(r.key()) : 0;
    };
  }

  /** A warning of the policy path, throttled and counted ({@link PolicyLog#warn}). */
  void warn(String kind, java.util.function.Supplier<String> message) {
    log.warn(kind, message);
  }

  /** Bytes of the records held. */
  public long bytes() {
    return bytes;
  }

  /** The most bytes of records held. */
  public long maxBytes() {
    return maxBytes;
  }

  /**
   * Writes the record of an automatic ban this limiter learned, for every instance and for
   * listings; a failure (the store's record cap, a timeout) is logged, throttled, without the key.
   */
  public void recordBan(String rule, String key, long untilMillis) {
    try {
      store.put(new PolicyRecord(PolicyKind.BAN, rule, key, "automatic", untilMillis)).whenComplete((v, err) -> {
        if (err != null) {
          log.banNotRecorded(rule, key, err);
        }
      });
    } catch (RuntimeException e) {
      log.banNotRecorded(rule, key, e);
    }
  }

  /** Applies one change made through this limiter at once, without waiting for the next read. */
  public synchronized void apply(PolicyRecord changed, PolicyRecord removed) {
    localEpoch++;
    Set<String> listsTouched = new HashSet<>();
    if (changed != null) {
      put(changed, listsTouched);
    }
    if (removed != null) {
      drop(removed, listsTouched);
    }
    if (!listsTouched.isEmpty()) {
      rebuildLists(rules, listsTouched);
    }
  }

  @Override
  public void close() {
    if (poller != null) {
      poller.shutdownNow();
      try {
        // A tick under way may still send a heartbeat: the limiter leaves the fleet after it.
        poller.awaitTermination(1, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void catchUp() {
    synchronized (this) {
      if (local.currentVersion() == seen) {
        return; // another decision caught up meanwhile
      }
      try {
        if (seen < 0) {
          readAll(localEpoch);
        } else {
          PolicyChanges c = local.changesSince(seen).toCompletableFuture().join();
          applyChanges(c, localEpoch);
        }
      } catch (RuntimeException e) {
        log.warn(PolicyLog.READ_FAILED, () -> "reading the memory store's policies failed: " + e);
      }
    }
  }

  /** One tick of the remote store's poll, run on the caller's thread. */
  void pollOnce() {
    poll();
  }

  /** Also run on every tick of the remote store's poll (the top offenders' flush). */
  public void onTick(Runnable task) {
    tickTasks.add(task);
  }

  /** One tick of the remote store's poll. */
  private void poll() {
    for (Runnable task : tickTasks) {
      try {
        task.run();
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.DEBUG, "a policy tick task failed: " + e);
      }
    }
    try {
      long epoch;
      long from;
      synchronized (this) {
        epoch = localEpoch;
        from = seen;
      }
      if (from < 0) {
        readAll(epoch);
      } else {
        PolicyChanges c = store.changesSince(from).toCompletableFuture()
            .get(READ_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        synchronized (this) {
          if (seen == from) {
            applyChanges(c, epoch);
          }
        }
      }
      if (failing) {
        failing = false;
        LOG.log(System.Logger.Level.INFO, "reading the store's policies works again");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      if (!failing) {
        failing = true;
        LOG.log(System.Logger.Level.WARNING, "reading the store's policies failed (retried every " + POLL_MILLIS
            + " ms; the policies stay as last read): " + e);
      }
    }
  }

  /** Applies changes read while this limiter's own changes numbered {@code epoch}. */
  void applyRead(PolicyChanges c, long epoch) {
    applyChanges(c, epoch);
  }

  /** Applies changes read while {@code epoch} was current; a full read when they are incomplete. */
  private void applyChanges(PolicyChanges c, long epoch) {
    if (!c.complete()) {
      readAll(epoch);
      return;
    }
    synchronized (this) {
      if (localEpoch != epoch) {
        return; // read before a change of ours: the next read brings both
      }
      Set<String> listsTouched = new HashSet<>();
      for (PolicyRecord r : c.removed()) {
        drop(r, listsTouched);
      }
      for (PolicyRecord r : c.changed()) {
        put(r, listsTouched);
      }
      if (!listsTouched.isEmpty()) {
        rebuildLists(rules, listsTouched);
      }
      seen = c.version();
    }
  }

  /** Reads every record and replaces what is held. */
  private void readAll(long epoch) {
    long version = join(store.version());
    Map<PolicyKind, List<PolicyRecord>> all = new HashMap<>();
    for (PolicyKind kind : PolicyKind.values()) {
      List<PolicyRecord> out = new ArrayList<>();
      String after = null;
      int bound = kind == PolicyKind.LIMIT ? MAX_LIMITS : kind == PolicyKind.BAN ? MAX_BANS
          : MAX_RULES * RuleSet.MAX_LIST_ENTRIES;
      while (out.size() < bound) {
        List<PolicyRecord> page = join(store.page(kind, null, after, PAGE));
        out.addAll(page);
        if (page.size() < PAGE) {
          break;
        }
        after = page.get(page.size() - 1).cursor();
      }
      all.put(kind, out);
    }
    synchronized (this) {
      if (localEpoch != epoch) {
        return;
      }
      Map<String, RulePolicies> fresh = new HashMap<>();
      java.util.function.Function<String, RulePolicies> at = name -> {
        RulePolicies p = fresh.get(name);
        if (p == null && fresh.size() < MAX_RULES) {
          p = new RulePolicies(name);
          fresh.put(name, p);
        } else if (p == null) {
          full("rules with policies", MAX_RULES);
        }
        return p;
      };
      long[] counts = new long[3];
      for (List<PolicyRecord> records : all.values()) {
        for (PolicyRecord r : records) {
          put(r, new HashSet<>(), at.apply(r.rule()), counts);
        }
      }
      if (seen > version) {
        PolicyLoss.report(byRule, fresh, log.nowMillis(), seen, version, log);
      }
      limitCount.set((int) counts[0]);
      banCount.set((int) counts[1]);
      bytes = counts[2];
      byRule = Collections.unmodifiableMap(fresh);
      rebuildLists(rules, null);
      seen = version;
    }
  }

  private <T> T join(java.util.concurrent.CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get(READ_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading the store's policies", e);
    } catch (Exception e) {
      throw new IllegalStateException("reading the store's policies failed: " + e.getMessage(), e);
    }
  }

  private void put(PolicyRecord r, Set<String> listsTouched) {
    put(r, listsTouched, rulePolicies(r.rule(), true), null);
  }

  /**
   * Puts one record into {@code p} (null: left out); counts go to {@code counts} (limits, bans,
   * bytes) when given, else to this cache's.
   */
  private void put(PolicyRecord r, Set<String> listsTouched, RulePolicies p, long[] counts) {
    if (p == null) {
      return;
    }
    long held = counts != null ? counts[2] : bytes;
    switch (r.kind()) {
      case LIMIT -> {
        LiveLimit l;
        try {
          l = LiveLimits.decode(r.value());
        } catch (IllegalArgumentException e) {
          log.warn(PolicyLog.RECORD_UNREADABLE, () -> "a live limit of rule '" + r.rule() + "' left out: "
              + PolicyLog.withoutKey(e.getMessage(), r.key()));
          return;
        }
        long heldLimits = counts != null ? counts[0] : limitCount.get();
        LiveLimit old = p.limits.get(r.key());
        if (old == null && heldLimits >= MAX_LIMITS) {
          full("live limits", MAX_LIMITS);
          return;
        }
        long b = PolicyBytes.limit(r.key(), l) - (old == null ? 0 : PolicyBytes.limit(r.key(), old));
        if (b > 0 && held + b > maxBytes) {
          fullBytes();
          return;
        }
        if (p.limits.put(r.key(), l) == null) {
          count(counts, 0, 1);
        }
        count(counts, 2, b);
      }
      case BAN -> {
        long until = r.expiresAtMillis() == 0 ? Long.MAX_VALUE : r.expiresAtMillis();
        long heldBans = counts != null ? counts[1] : banCount.get();
        boolean known = p.bans.containsKey(r.key());
        if (!known && heldBans >= MAX_BANS) {
          full("bans", MAX_BANS);
          return;
        }
        if (!known && held + PolicyBytes.ban(r.key()) > maxBytes) {
          fullBytes();
          return;
        }
        if (p.bans.put(r.key(), until) == null) {
          count(counts, 1, 1);
          count(counts, 2, PolicyBytes.ban(r.key()));
        }
      }
      case ALLOW, DENY -> {
        Set<String> entries = r.kind() == PolicyKind.ALLOW ? p.runtimeAllow : p.runtimeDeny;
        if (entries.size() >= RuleSet.MAX_LIST_ENTRIES && !entries.contains(r.key())) {
          full("entries of the " + r.kind().name().toLowerCase(java.util.Locale.ROOT) + " list of rule '" + r.rule()
              + "'", RuleSet.MAX_LIST_ENTRIES);
          return;
        }
        try {
          AccessList.parseEntry(r.key());
        } catch (IllegalArgumentException e) {
          log.warn(PolicyLog.RECORD_UNREADABLE, () -> "an entry of a list of rule '" + r.rule() + "' left out: "
              + PolicyLog.withoutKey(e.getMessage(), r.key()));
          return;
        }
        if (!entries.contains(r.key()) && held + PolicyBytes.entry(r.key()) > maxBytes) {
          fullBytes();
          return;
        }
        if (entries.add(r.key())) {
          listsTouched.add(r.rule());
          count(counts, 2, PolicyBytes.entry(r.key()));
        }
      }
    }
  }

  /** Adds {@code n} to {@code counts[i]} when given, else to this cache's count {@code i} (limits, bans, bytes). */
  private void count(long[] counts, int i, long n) {
    if (counts != null) {
      counts[i] += n;
    } else if (i == 0) {
      limitCount.addAndGet((int) n);
    } else if (i == 1) {
      banCount.addAndGet((int) n);
    } else {
      bytes += n;
    }
  }

  private void drop(PolicyRecord r, Set<String> listsTouched) {
    RulePolicies p = rulePolicies(r.rule(), false);
    if (p == null) {
      return;
    }
    switch (r.kind()) {
      case LIMIT -> {
        LiveLimit old = p.limits.remove(r.key());
        if (old != null) {
          limitCount.decrementAndGet();
          bytes -= PolicyBytes.limit(r.key(), old);
        }
      }
      case BAN -> {
        if (p.bans.remove(r.key()) != null) {
          banCount.decrementAndGet();
          bytes -= PolicyBytes.ban(r.key());
        }
      }
      case ALLOW, DENY -> {
        if ((r.kind() == PolicyKind.ALLOW ? p.runtimeAllow : p.runtimeDeny).remove(r.key())) {
          listsTouched.add(r.rule());
          bytes -= PolicyBytes.entry(r.key());
        }
      }
    }
  }

  private RulePolicies rulePolicies(String rule, boolean create) {
    RulePolicies p = byRule.get(rule);
    if (p != null || !create) {
      return p;
    }
    synchronized (this) {
      Map<String, RulePolicies> b = byRule;
      p = b.get(rule);
      if (p == null) {
        if (b.size() >= MAX_RULES) {
          full("rules with policies", MAX_RULES);
          return null;
        }
        Map<String, RulePolicies> next = new HashMap<>(b);
        p = new RulePolicies(rule);
        next.put(rule, p);
        byRule = Collections.unmodifiableMap(next);
      }
      return p;
    }
  }

  /** Rebuilds the lists of {@code only} (every rule when null) from configuration and run-time entries. */
  private synchronized void rebuildLists(RuleSet rs, Set<String> only) {
    Set<String> names = new LinkedHashSet<>();
    if (only == null) {
      names.addAll(byRule.keySet());
      names.addAll(rs.lists(ListKind.ALLOW).keySet());
      names.addAll(rs.lists(ListKind.DENY).keySet());
    } else {
      names.addAll(only);
    }
    for (String name : names) {
      List<String> allowConf = rs.lists(ListKind.ALLOW).getOrDefault(name, List.of());
      List<String> denyConf = rs.lists(ListKind.DENY).getOrDefault(name, List.of());
      RulePolicies p = rulePolicies(name, !allowConf.isEmpty() || !denyConf.isEmpty());
      if (p == null) {
        continue;
      }
      p.allow = list(name, "allow", allowConf, p.runtimeAllow);
      p.deny = list(name, "deny", denyConf, p.runtimeDeny);
    }
  }

  private static AccessList list(String rule, String kind, List<String> configured, Set<String> runtime) {
    if (configured.isEmpty() && runtime.isEmpty()) {
      return AccessList.empty();
    }
    Set<String> all = new LinkedHashSet<>(configured);
    all.addAll(runtime);
    try {
      return AccessList.of(all);
    } catch (IllegalArgumentException e) {
      // A configured entry is checked when the configuration is read; keep the valid ones.
      LOG.log(System.Logger.Level.WARNING, "the " + kind + " list of rule '" + rule + "': " + e.getMessage());
      List<String> valid = new ArrayList<>();
      for (String s : all) {
        try {
          AccessList.parseEntry(s);
          valid.add(s);
        } catch (IllegalArgumentException bad) {
          // left out, logged above
        }
      }
      return AccessList.of(valid);
    }
  }

  private void full(String what, int max) {
    log.warn(PolicyLog.CACHE_FULL, () -> "the limiter caches at most " + max + " " + what
        + "; the rest are not applied by this instance");
  }

  private void fullBytes() {
    log.warn(PolicyLog.CACHE_FULL, () -> "the limiter's cache of policies holds " + bytes + " of its " + maxBytes
        + " bytes; records beyond are not applied by this instance");
  }
}
