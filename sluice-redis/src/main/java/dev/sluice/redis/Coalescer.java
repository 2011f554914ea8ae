package dev.sluice.redis;

import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sends the decisions of one connection to a single server (standalone or Sentinel), keeping at
 * most {@code depth} calls in flight. A decision that comes while fewer than half of them are in
 * flight is sent at once, as its own call, exactly as without this class: at low and moderate
 * load nothing waits. Beyond that, decisions wait, and go together as one call
 * (mode {@code b} of the script, up to {@link #MAX_REQUESTS} of them) when {@code minBatch} of
 * them wait, or when a call returns (what waits then goes, however little), while fewer than
 * {@code depth} are in flight. A decision so waits at most until the next call returns.
 *
 * <p>The script decides a batch's requests one after the other, each all or nothing on its own:
 * the same decisions as separate calls at the same server time, since a script runs alone on the
 * server. What a batch saves is what every call costs whatever it decides: the command, its
 * system calls on both sides, reading the server's clock, the script's entry, and on the client a
 * wake-up of the connection's thread per call sent from another thread. Under load, when
 * decisions queue anyway, that is most of the server's work per decision beyond the decision's
 * own (see "Batches" in {@code docs/redis-internals.md}).
 *
 * <p>A decision is never sent later than {@code timeout} after it was submitted: one that waited
 * that long fails unsent (it is counted nowhere) with a {@link RedisCommandTimeoutException}, as
 * a call that took that long does.
 */
final class Coalescer {
  /** Requests per call: enough to amortise a call, and a script that ends within a millisecond. */
  static final int MAX_REQUESTS = 128;
  /** Items per call; a request with more goes alone (and its count fits the byte the script reads). */
  static final int MAX_ITEMS = 255;

  private static final byte[] BATCH = {'b'};
  /** A batch with a request of a rule that bans or audits: every request with the policy hooks. */
  private static final byte[] BATCH_POLICIES = {'B'};
  private static final byte[] EMPTY = {};
  /** An item's audit value in a batch with policies: none (a little-endian -1). */
  private static final byte[] NO_VALUE = {-1, -1, -1, -1};

  /** A request waiting for a call, as {@link #submit} took it. */
  private static final class Pending {
    /** Its state keys, then (a request with policies) their sibling keys. */
    final byte[][] keys;
    /** Its items: its state keys come first in {@link #keys}. */
    final int items;
    /** Its arguments for a call of its own; with policies, the last holds its audit values. */
    final byte[][] args;
    final boolean policies;
    final byte[] time;
    /** The numbers of its report, when given as numbers (see {@link Replies}). */
    final int longs;
    final long submittedAt;
    final CompletableFuture<Replies.Report> reply = new CompletableFuture<>();

    Pending(byte[][] keys, int items, byte[][] args, boolean policies, byte[] time, int longs) {
      this.keys = keys;
      this.items = items;
      this.args = args;
      this.policies = policies;
      this.time = time;
      this.longs = longs;
      this.submittedAt = System.nanoTime();
    }
  }

  private final Link link;
  private final int depth;
  private final long timeoutNanos;
  private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();
  private final int minBatch;
  /** Calls that may be in flight before decisions start to wait for company: half of depth. */
  private final int immediate;
  private final AtomicInteger inFlight = new AtomicInteger();
  /** Decisions in the queue (ConcurrentLinkedQueue's size() walks it). */
  private final AtomicInteger queued = new AtomicInteger();
  /** A call returned since the sender last looked: what waits may go, however little. */
  private final AtomicBoolean returned = new AtomicBoolean();
  /** Held by the one thread that takes from the queue and sends; others only add. */
  private final AtomicBoolean sending = new AtomicBoolean();
  private volatile boolean closed;

  /**
   * {@code depth} 0: every decision is its own call, sent at once; {@code minBatch} 1: every
   * decision that finds fewer than {@code depth} calls in flight is sent at once.
   */
  Coalescer(Link link, int depth, int minBatch, long timeoutNanos) {
    this.link = link;
    this.depth = depth;
    this.minBatch = minBatch;
    this.immediate = Math.max(1, depth / 2);
    this.timeoutNanos = timeoutNanos;
  }

  /**
   * The report of one request: its keys, its arguments for a call of its own (args[0]: mode and
   * time), its explicit time (empty: the server's clock) and the numbers of its report when given
   * as numbers ({@link Replies#longs}).
   */
  CompletableFuture<Replies.Report> submit(byte[][] keys, byte[][] args, byte[] time, int longs) {
    return submit(keys, keys.length, args, false, time, longs);
  }

  /**
   * The report of one request with an item of a rule that bans or audits, as {@link #submit}:
   * its keys and arguments laid out by {@link PolicyArguments} for a call of its own (mode
   * {@code p}), its first {@code items} keys its state keys.
   */
  CompletableFuture<Replies.Report> submitWithPolicies(byte[][] keys, int items, byte[][] args, byte[] time, int longs) {
    return submit(keys, items, args, true, time, longs);
  }

  private CompletableFuture<Replies.Report> submit(byte[][] keys, int items, byte[][] args, boolean policies,
      byte[] time, int longs) {
    if (depth == 0) {
      return call(link, keys, args, longs);
    }
    if (closed) {
      return CompletableFuture.failedFuture(new IllegalStateException("the Redis store is closed"));
    }
    Pending p = new Pending(keys, items, args, policies, time, longs);
    queue.add(p);
    queued.incrementAndGet();
    drain();
    return p.reply;
  }

  /**
   * Sends what waits while there is room in flight and a call may go (see the class comment).
   * Whoever finds the queue busy leaves: the sender looks again after letting go, so nothing added
   * meanwhile is stranded.
   */
  private void drain() {
    while (true) {
      if (!sending.compareAndSet(false, true)) {
        return;
      }
      try {
        while (maySend(true)) {
          List<Pending> batch = take();
          if (batch == null) {
            break;
          }
          inFlight.incrementAndGet();
          send(batch);
        }
      } finally {
        sending.set(false);
      }
      if (queue.isEmpty() || closed || !maySend(false)) {
        return;
      }
    }
  }

  /**
   * Whether a call may go now: fewer than {@code depth} in flight, and fewer than half of them,
   * or {@code minBatch} decisions waiting, or a call returned since the last
   * look ({@code take}: that return is used up by this look, whether anything waits or not).
   */
  private boolean maySend(boolean take) {
    int n = inFlight.get();
    if (n >= depth) {
      return false;
    }
    if (n < immediate || queued.get() >= minBatch) {
      return true;
    }
    return take ? returned.getAndSet(false) : returned.get();
  }

  /**
   * The next call's requests: consecutive ones decided at the same time (the server's clock, or
   * one explicit time), up to the limits; null when nothing waits. Requests that waited longer
   * than the timeout fail here instead.
   */
  private List<Pending> take() {
    List<Pending> batch = null;
    int items = 0;
    long now = System.nanoTime();
    Pending p;
    while ((p = queue.peek()) != null) {
      if (now - p.submittedAt > timeoutNanos) {
        queue.poll();
        queued.decrementAndGet();
        p.reply.completeExceptionally(new RedisCommandTimeoutException("the decision waited "
            + (now - p.submittedAt) / 1_000_000
            + " ms for a call to the Redis store, longer than the command timeout"));
        continue;
      }
      int n = p.items;
      if (batch != null) {
        if (n > MAX_ITEMS || batch.size() >= MAX_REQUESTS || items + n > MAX_ITEMS
            || !Arrays.equals(p.time, batch.get(0).time)) {
          break;
        }
      }
      queue.poll();
      queued.decrementAndGet();
      if (batch == null) {
        batch = new ArrayList<>();
      }
      batch.add(p);
      items += n;
      if (n > MAX_ITEMS) {
        break;
      }
    }
    return batch;
  }

  /** One request as a call of its own: its report. */
  static CompletableFuture<Replies.Report> call(Link link, byte[][] keys, byte[][] args, int longs) {
    return DecisionScript.<byte[]>run(link, ScriptOutputType.VALUE, keys, args)
        .thenApply(reply -> Replies.split(reply, new int[] {longs})[0]);
  }

  private void send(List<Pending> batch) {
    CompletableFuture<byte[]> call;
    try {
      if (batch.size() == 1) {
        Pending p = batch.get(0);
        call = DecisionScript.run(link, ScriptOutputType.VALUE, p.keys, p.args);
      } else {
        call = DecisionScript.run(link, ScriptOutputType.VALUE, keys(batch), args(batch));
      }
    } catch (RuntimeException e) {
      call = CompletableFuture.failedFuture(e);
    }
    call.whenComplete((reply, err) -> {
      // The next call goes out before this one's decisions are handed back.
      inFlight.decrementAndGet();
      returned.set(true);
      drain();
      if (err != null) {
        fail(batch, err);
      } else {
        split(batch, reply);
      }
    });
  }

  private static void fail(List<Pending> batch, Throwable err) {
    for (Pending p : batch) {
      p.reply.completeExceptionally(err);
    }
  }

  /** Every request's state keys, then (with policies) every request's sibling keys, in request order. */
  private static byte[][] keys(List<Pending> batch) {
    int n = 0;
    for (Pending p : batch) {
      n += p.keys.length;
    }
    byte[][] keys = new byte[n][];
    int k = 0;
    for (Pending p : batch) {
      System.arraycopy(p.keys, 0, keys, k, p.items);
      k += p.items;
    }
    for (Pending p : batch) {
      System.arraycopy(p.keys, p.items, keys, k, p.keys.length - p.items);
      k += p.keys.length - p.items;
    }
    return keys;
  }

  /**
   * {@code b} and the time; each request's item count (empty: one each); each item's position
   * among the distinct item arguments (empty: all have the first); the distinct item arguments.
   * A batch's requests mostly share a rule and cost, so mostly share their argument: sent once,
   * it spares the server a tenth of each batched decision.
   */
  private static byte[][] args(List<Pending> batch) {
    int n = 0;
    boolean oneEach = true;
    boolean policies = false;
    for (Pending p : batch) {
      n += p.items;
      oneEach &= p.items == 1;
      policies |= p.policies;
    }
    byte[] time = batch.get(0).time;
    byte[] batchMode = policies ? BATCH_POLICIES : BATCH;
    byte[] mode;
    if (time.length == 0) {
      mode = batchMode;
    } else {
      mode = Arrays.copyOf(batchMode, 1 + time.length);
      System.arraycopy(time, 0, mode, 1, time.length);
    }
    byte[] counts = EMPTY;
    if (!oneEach || policies) {
      counts = new byte[batch.size()];
      for (int i = 0; i < counts.length; i++) {
        counts[i] = (byte) batch.get(i).items;
      }
    }
    // Distinct arguments, found by a scan: a batch holds a handful (at most MAX_ITEMS).
    List<byte[]> distinct = new ArrayList<>(4);
    byte[] index = new byte[n];
    boolean allFirst = true;
    int k = 0;
    for (Pending p : batch) {
      for (int i = 1; i <= p.items; i++) {
        byte[] a = p.args[i];
        int at = 0;
        while (at < distinct.size() && distinct.get(at) != a && !Arrays.equals(distinct.get(at), a)) {
          at++;
        }
        if (at == distinct.size()) {
          distinct.add(a);
        }
        index[k++] = (byte) (at + 1);
        allFirst &= at == 0;
      }
    }
    int first = policies ? 4 : 3;
    byte[][] args = new byte[first + distinct.size()][];
    args[0] = mode;
    args[1] = counts;
    args[2] = allFirst ? EMPTY : index;
    if (policies) {
      args[3] = auditValues(batch);
    }
    for (int i = 0; i < distinct.size(); i++) {
      args[first + i] = distinct.get(i);
    }
    return args;
  }

  /** Every item's audit value, in item order: a request without policies has none. */
  private static byte[] auditValues(List<Pending> batch) {
    int size = 0;
    for (Pending p : batch) {
      size += p.policies ? p.args[p.args.length - 1].length : NO_VALUE.length * p.items;
    }
    byte[] values = new byte[size];
    int at = 0;
    for (Pending p : batch) {
      if (p.policies) {
        byte[] v = p.args[p.args.length - 1];
        System.arraycopy(v, 0, values, at, v.length);
        at += v.length;
      } else {
        for (int i = 0; i < p.items; i++) {
          System.arraycopy(NO_VALUE, 0, values, at, NO_VALUE.length);
          at += NO_VALUE.length;
        }
      }
    }
    return values;
  }

  /** Hands each request its report. */
  private static void split(List<Pending> batch, byte[] reply) {
    int[] longs = new int[batch.size()];
    for (int i = 0; i < longs.length; i++) {
      longs[i] = batch.get(i).longs;
    }
    Replies.Report[] reports;
    try {
      reports = Replies.split(reply, longs);
    } catch (IllegalStateException e) {
      fail(batch, new MalformedReplyException("script reply to a batch of " + batch.size() + ": " + e.getMessage(), e));
      return;
    }
    for (int i = 0; i < reports.length; i++) {
      batch.get(i).reply.complete(reports[i]);
    }
  }

  /** Fails what still waits; calls in flight end as the connection closes. */
  void close() {
    closed = true;
    // Taken from the queue by its one sender only.
    while (!sending.compareAndSet(false, true)) {
      Thread.onSpinWait();
    }
    try {
      Pending p;
      while ((p = queue.poll()) != null) {
        queued.decrementAndGet();
        p.reply.completeExceptionally(new IllegalStateException("the Redis store is closed"));
      }
    } finally {
      sending.set(false);
    }
  }
}
