package dev.sluice.internal.policy;

import dev.sluice.Ticker;
import dev.sluice.spi.Membership;
import dev.sluice.FleetView;
import dev.sluice.internal.lease.LeaseHolder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The limiters that share a store, counted through heartbeats in it, so that
 * {@code failure_mode: local} holds 1 / their number of each limit while the store is out.
 *
 * <p>Each instance says it is alive about once a second ({@link Membership#heartbeat}, on each
 * tick of the policy poll when one is due) and reads back how many said so within the last
 * {@value #TTL_MILLIS} ms. While the store is unreachable no heartbeat gets through, so the count
 * stays as last read — the fleet as it was when the outage began, which is what the share must be
 * divided by. A closing instance leaves at once ({@link #leave}); one that dies stops being counted
 * after the ttl.
 */
public final class Fleet {
  static final long BEAT_MICROS = 1_000_000;
  /** Three missed heartbeats and an instance is no longer counted. */
  static final long TTL_MILLIS = 3_000;

  private static final System.Logger LOG = System.getLogger(Fleet.class.getName());

  private final Membership store;
  private final Ticker ticker;
  private final String id;
  private final AtomicLong nextBeat = new AtomicLong(Long.MIN_VALUE);
  private volatile int live = 1;

  public Fleet(Membership store, Ticker ticker) {
    this(store, ticker, LeaseHolder.newId(""));
  }

  /** @param id this instance's id in the store ({@link LeaseHolder#newId}) */
  public Fleet(Membership store, Ticker ticker, String id) {
    this.store = store;
    this.ticker = ticker;
    this.id = id;
  }

  /**
   * {@code RateLimiter.fleet(max)} of the limiter {@code id}: {@code fleet}'s view, or, without one
   * (a store not shared, or keeping no heartbeats), the limiter alone.
   */
  public static CompletionStage<FleetView> view(Fleet fleet, String id, int max) {
    if (max < 1 || max > FleetView.MAX_LISTED) {
      return CompletableFuture.failedFuture(new IllegalArgumentException(
          "max must be from 1 to " + FleetView.MAX_LISTED + ", was " + max));
    }
    if (fleet == null) {
      return CompletableFuture.completedFuture(new FleetView(id, 1, List.of(new FleetView.Instance(id, 0))));
    }
    return fleet.view(max);
  }

  /** The fleet as the store lists it now: the {@code max} instances heard most recently. */
  public CompletionStage<FleetView> view(int max) {
    return store.members(TTL_MILLIS, max).thenApply(m -> {
      List<FleetView.Instance> listed = new ArrayList<>(m.first().size());
      for (Membership.Member x : m.first()) {
        listed.add(new FleetView.Instance(x.instance(), Math.max(0, m.nowMillis() - x.lastSeenMillis())));
      }
      return new FleetView(id, m.count(), listed);
    });
  }

  /** This instance's id in the store. */
  String id() {
    return id;
  }

  /** The instances as last counted, this one included; 1 until the first heartbeat is answered. */
  public int live() {
    return live;
  }

  /** Sends a heartbeat if one is due; the count is updated when the store answers. */
  public void tick() {
    long now = ticker.nowMicros();
    long due = nextBeat.get();
    if (now < due || !nextBeat.compareAndSet(due, now + BEAT_MICROS)) {
      return;
    }
    try {
      store.heartbeat(id, TTL_MILLIS).whenComplete((n, err) -> {
        if (err == null && n != null && n > 0) {
          int before = live;
          live = n;
          if (n != before) {
            LOG.log(System.Logger.Level.INFO, "instances sharing the store: " + n + " (was " + before + ")");
          }
        }
      });
    } catch (RuntimeException e) {
      // The count stays as last read; the next tick tries again.
    }
  }

  /** Stops being counted, waiting at most {@code timeoutMillis} for the store. */
  public void leave(long timeoutMillis) {
    try {
      store.leave(id).toCompletableFuture().get(timeoutMillis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      // The others stop counting this instance after the ttl instead.
    }
  }
}
