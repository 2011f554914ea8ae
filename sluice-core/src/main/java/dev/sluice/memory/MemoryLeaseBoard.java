package dev.sluice.memory;

import dev.sluice.Ticker;
import dev.sluice.spi.LeaseBoard;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The lease board of a {@link MemoryStore}: the leader record, the token counter, each instance's
 * last report and the sizes published for it, all under this object's lock and on the store's
 * ticker, so each call is one atomic step as each script call is on Redis.
 *
 * <p>Bounded: at most {@code maxInstances} instances with a report kept, and as many with sizes
 * kept; each entry at most {@link LeaseBoard#MAX_ENTRY_BYTES}; at most {@code maxBytes} for all
 * entries together. Expired entries are dropped first, oldest expiry first; past the bounds a new
 * instance's report or sizes are refused with an {@link IllegalStateException} naming the bound.
 */
final class MemoryLeaseBoard implements LeaseBoard {
  /** Instances kept at most, by default: a fleet larger than this does not share one store. */
  static final int MAX_INSTANCES = 10_000;
  /** An entry's bytes besides its id and data: map entry, record, array header, expiry index. */
  private static final long ENTRY_OVERHEAD = 160;

  /** An entry kept until {@code untilMillis}; sizes also carry their publishing token and time. */
  private record Entry(byte[] data, long untilMillis, long publishedAtMillis, long token) {}

  private final Ticker ticker;
  private final int maxInstances;
  private final long maxBytes;

  private String leader;
  private long leaderToken;
  private long leaderUntil;
  /** The last token handed out: tokens only grow, across resignations too. */
  private long epoch;

  private final Map<String, Entry> reports = new HashMap<>();
  private final Map<String, Entry> sizes = new HashMap<>();
  /** Expiry order of each table, to drop the oldest expired first without a walk over all. */
  private final TreeSet<Expiry> reportExpiries = new TreeSet<>();
  private final TreeSet<Expiry> sizeExpiries = new TreeSet<>();
  private long bytes;

  private record Expiry(long untilMillis, String instance) implements Comparable<Expiry> {
    @Override
    public int compareTo(Expiry o) {
      int c = Long.compare(untilMillis, o.untilMillis);
      return c != 0 ? c : instance.compareTo(o.instance);
    }
  }

  MemoryLeaseBoard(Ticker ticker, int maxInstances, long maxBytes) {
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    if (maxInstances < 1 || maxBytes < 1) {
      throw new IllegalArgumentException("a lease board holds at least one instance and one byte, was "
          + maxInstances + " instances and " + maxBytes + " bytes");
    }
    this.maxInstances = maxInstances;
    this.maxBytes = maxBytes;
  }

  @Override
  public synchronized CompletionStage<Leader> campaign(String instance, long termMillis) {
    try {
      LeaseBoard.checkInstance(instance);
      LeaseBoard.checkMillis(termMillis, "term");
      long now = nowMillis();
      if (leader == null || leaderUntil <= now) {
        leader = instance;
        leaderToken = ++epoch;
        leaderUntil = now + termMillis;
      } else if (leader.equals(instance)) {
        leaderUntil = now + termMillis;
      }
      return CompletableFuture.completedFuture(leaderAt(now));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public synchronized CompletionStage<Leader> leader() {
    return CompletableFuture.completedFuture(leaderAt(nowMillis()));
  }

  @Override
  public synchronized CompletionStage<Void> resign(String instance, long token) {
    try {
      LeaseBoard.checkInstance(instance);
      if (instance.equals(leader) && token == leaderToken) {
        leader = null;
        leaderToken = 0;
        leaderUntil = 0;
      }
      return CompletableFuture.completedFuture(null);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public synchronized CompletionStage<ReportAnswer> report(String instance, byte[] report, long ttlMillis) {
    try {
      LeaseBoard.checkInstance(instance);
      LeaseBoard.checkEntry(Objects.requireNonNull(report, "report"), "report of " + instance);
      LeaseBoard.checkMillis(ttlMillis, "report ttl");
      long now = nowMillis();
      dropExpired(now);
      Entry old = reports.get(instance);
      if (old == null && reports.size() >= maxInstances) {
        throw new IllegalStateException("lease board full: reports of " + maxInstances
            + " instances are kept, the most it holds; a report of a new instance " + instance + " is refused");
      }
      long grow = entryBytes(instance, report) - (old == null ? 0 : entryBytes(instance, old.data));
      checkBytes(grow, "report of " + instance);
      if (old != null) {
        reportExpiries.remove(new Expiry(old.untilMillis, instance));
      }
      reports.put(instance, new Entry(report.clone(), now + ttlMillis, 0, 0));
      reportExpiries.add(new Expiry(now + ttlMillis, instance));
      bytes += grow;
      Entry mine = sizes.get(instance);
      byte[] answer = mine == null ? new byte[0] : mine.data.clone();
      long publishedAt = mine == null ? 0 : mine.publishedAtMillis;
      return CompletableFuture.completedFuture(new ReportAnswer(answer, publishedAt, leaderAt(now), reports.size()));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public synchronized CompletionStage<Map<String, byte[]>> reports(long maxBytes) {
    long now = nowMillis();
    dropExpired(now);
    // By id, so that the instances left out past the bound are the same ones from call to call.
    Map<String, byte[]> out = new LinkedHashMap<>();
    long total = 0;
    for (Map.Entry<String, Entry> e : new TreeMap<>(reports).entrySet()) {
      byte[] data = e.getValue().data;
      if (total + data.length > maxBytes) {
        break;
      }
      total += data.length;
      out.put(e.getKey(), data.clone());
    }
    return CompletableFuture.completedFuture(out);
  }

  @Override
  public synchronized CompletionStage<Boolean> publish(String instance, long token, Map<String, byte[]> published,
      long ttlMillis) {
    try {
      LeaseBoard.checkInstance(instance);
      Objects.requireNonNull(published, "sizes");
      LeaseBoard.checkMillis(ttlMillis, "sizes ttl");
      long grow = 0;
      int added = 0;
      for (Map.Entry<String, byte[]> e : published.entrySet()) {
        LeaseBoard.checkInstance(e.getKey());
        LeaseBoard.checkEntry(Objects.requireNonNull(e.getValue(), "sizes"), "sizes of " + e.getKey());
      }
      long now = nowMillis();
      if (!instance.equals(leader) || token != leaderToken || leaderUntil <= now) {
        return CompletableFuture.completedFuture(false);
      }
      dropExpired(now);
      for (Map.Entry<String, byte[]> e : published.entrySet()) {
        Entry old = sizes.get(e.getKey());
        grow += entryBytes(e.getKey(), e.getValue()) - (old == null ? 0 : entryBytes(e.getKey(), old.data));
        added += old == null ? 1 : 0;
      }
      if (sizes.size() + added > maxInstances) {
        throw new IllegalStateException("lease board full: sizes of " + (sizes.size() + added)
            + " instances would be kept, more than the " + maxInstances + " it holds; nothing was published");
      }
      checkBytes(grow, "sizes of " + published.size() + " instances");
      for (Map.Entry<String, byte[]> e : published.entrySet()) {
        Entry old = sizes.put(e.getKey(), new Entry(e.getValue().clone(), now + ttlMillis, now, token));
        if (old != null) {
          sizeExpiries.remove(new Expiry(old.untilMillis, e.getKey()));
        }
        sizeExpiries.add(new Expiry(now + ttlMillis, e.getKey()));
      }
      bytes += grow;
      return CompletableFuture.completedFuture(true);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Bytes the entries kept take, as counted against the bound (expired ones not yet dropped included). */
  synchronized long bytes() {
    return bytes;
  }

  private Leader leaderAt(long now) {
    if (leader == null || leaderUntil <= now) {
      return new Leader(null, 0, 0, now);
    }
    return new Leader(leader, leaderToken, leaderUntil, now);
  }

  private void dropExpired(long now) {
    drop(reports, reportExpiries, now);
    drop(sizes, sizeExpiries, now);
  }

  private void drop(Map<String, Entry> table, TreeSet<Expiry> expiries, long now) {
    while (!expiries.isEmpty() && expiries.first().untilMillis <= now) {
      Expiry x = expiries.pollFirst();
      Entry gone = table.remove(x.instance);
      bytes -= entryBytes(x.instance, gone.data);
    }
  }

  private void checkBytes(long grow, String what) {
    if (bytes + grow > maxBytes) {
      throw new IllegalStateException("lease board full: the " + what + " would bring its entries to "
          + (bytes + grow) + " bytes, over its bound of " + maxBytes + " bytes");
    }
  }

  private static long entryBytes(String instance, byte[] data) {
    return ENTRY_OVERHEAD + 2L * instance.length() + data.length;
  }

  private long nowMillis() {
    return Math.floorDiv(ticker.nowMicros(), 1000L);
  }
}
