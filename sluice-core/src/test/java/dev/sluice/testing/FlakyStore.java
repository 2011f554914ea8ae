package dev.sluice.testing;

import dev.sluice.ItemDecision;
import dev.sluice.RuleSet;
import dev.sluice.spi.Batch;
import dev.sluice.spi.DenialSketches;
import dev.sluice.spi.Membership;
import dev.sluice.spi.PolicyRecords;
import dev.sluice.spi.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A remote-looking store (not local, so timeouts and failure modes apply) in front of a real one,
 * that can be made to fail in the ways a network store fails. For failure-mode tests; not a mock
 * of any real store's behaviour.
 */
public final class FlakyStore implements Store {

  /** How {@link #decide} behaves. */
  public enum Mode {
    /** Passes every call to the store behind. */
    UP,
    /** Returns a stage that completes exceptionally, as a refused connection does. */
    FAILS,
    /** Throws from {@code decide} itself. */
    THROWS,
    /** Returns a stage that never completes, as a server that stopped answering does. */
    HANGS
  }

  private final Store behind;
  private final AtomicInteger calls = new AtomicInteger();
  private volatile Mode mode = Mode.UP;
  private volatile boolean policies;
  private volatile boolean shared;

  private boolean leases;
  /** Stalled answers of the leased-mode calls, oldest first; guarded by itself. */
  private final List<Held> held = new ArrayList<>();
  private volatile Stall stall;

  public FlakyStore(Store behind) {
    this.behind = behind;
  }

  public FlakyStore mode(Mode m) {
    this.mode = m;
    return this;
  }

  /** Lends the store's policies (bans, lists, live limits), which are left out by default. */
  public FlakyStore withPolicies() {
    this.policies = true;
    return this;
  }

  @Override
  public Optional<PolicyRecords> records() {
    return policies ? behind.records() : Optional.empty();
  }

  @Override
  public Optional<DenialSketches> sketches() {
    return policies ? behind.sketches() : Optional.empty();
  }

  @Override
  public Optional<Membership> membership() {
    return policies ? behind.membership() : Optional.empty();
  }

  /** Lends the store's leased-mode capabilities (grants, lease board), left out by default. */
  public FlakyStore withLeases() {
    this.leases = true;
    return this;
  }

  @Override
  public Optional<dev.sluice.spi.Grants> grants() {
    return leases ? behind.grants().map(g -> cutOff(dev.sluice.spi.Grants.class, g)) : Optional.empty();
  }

  @Override
  public Optional<dev.sluice.spi.LeaseBoard> leaseBoard() {
    return leases ? behind.leaseBoard().map(b -> cutOff(dev.sluice.spi.LeaseBoard.class, b)) : Optional.empty();
  }

  /**
   * {@code real} behind this store's mode: a call fails (or hangs, or throws) as {@link #decide}
   * does when the mode says so, so that an instance cut off from the store loses its leases too.
   */
  private <T> T cutOff(Class<T> type, T real) {
    return type.cast(java.lang.reflect.Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
        (proxy, method, args) -> {
          if (method.getDeclaringClass() == Object.class) {
            return method.invoke(real, args);
          }
          switch (mode) {
            case FAILS:
              return CompletableFuture.failedFuture(new IllegalStateException("store refused the connection"));
            case THROWS:
              throw new IllegalStateException("store client is closed");
            case HANGS:
              return new CompletableFuture<>();
            default:
              try {
                return held(method.getName(), method.invoke(real, args));
              } catch (java.lang.reflect.InvocationTargetException e) {
                throw e.getCause();
              }
          }
        }));
  }

  /**
   * How answers of leased-mode calls are held back: the call reaches the store at once and the
   * store does what it asks (a take commits its units), but its answer comes {@code millis} later
   * on {@code ticker}, as from a stalled client or a slow network back; with {@code timesOut}
   * the caller then gets a timeout instead of the answer, as from a client that gave up.
   *
   * @param calls the names of the {@code Grants} and {@code LeaseBoard} methods held ({@code take},
   *     {@code giveBack}, {@code report}, …)
   */
  public record Stall(dev.sluice.Ticker ticker, long millis, Set<String> calls, boolean timesOut) {}

  /** Holds the answers {@code s} names from now on; null answers at once again (held ones stay held). */
  public FlakyStore stall(Stall s) {
    this.stall = s;
    return this;
  }

  /**
   * Delivers the held answers that are due on the stall's clock, in the order the calls were made,
   * on the calling thread; all of them with {@code all}. Returns how many were delivered.
   */
  public int deliver(boolean all) {
    List<Held> due = new ArrayList<>();
    synchronized (held) {
      for (var it = held.iterator(); it.hasNext(); ) {
        Held h = it.next();
        if (all || h.stall.ticker().nowMicros() >= h.dueMicros) {
          due.add(h);
          it.remove();
        }
      }
    }
    for (Held h : due) {
      h.answer.whenComplete((v, e) -> {
        if (e != null) {
          h.late.completeExceptionally(e);
        } else if (h.stall.timesOut()) {
          h.late.completeExceptionally(new TimeoutException("the store did not answer in time"));
        } else {
          h.late.complete(v);
        }
      });
    }
    return due.size();
  }

  private record Held(Stall stall, long dueMicros, CompletionStage<?> answer, CompletableFuture<Object> late) {}

  private Object held(String method, Object answer) {
    Stall s = stall;
    if (s == null || !s.calls().contains(method) || !(answer instanceof CompletionStage<?> stage)) {
      return answer;
    }
    CompletableFuture<Object> late = new CompletableFuture<>();
    synchronized (held) {
      held.add(new Held(s, s.ticker().nowMicros() + s.millis() * 1000, stage, late));
    }
    return late;
  }

  /** Leaves the store behind open when closed: it is shared with other limiters. */
  public FlakyStore shared() {
    this.shared = true;
    return this;
  }

  /** Calls of {@link #decide}, failed ones included. */
  public int decideCalls() {
    return calls.get();
  }

  @Override
  public CompletionStage<List<ItemDecision>> decide(Batch batch) {
    calls.incrementAndGet();
    return switch (mode) {
      case UP -> behind.decide(batch);
      case FAILS -> CompletableFuture.failedFuture(new IllegalStateException("store refused the connection"));
      case THROWS -> throw new IllegalStateException("store client is closed");
      case HANGS -> new CompletableFuture<>();
    };
  }

  @Override
  public CompletionStage<Void> reset(String rule, String key) {
    return behind.reset(rule, key);
  }

  @Override
  public void rulesChanged(RuleSet before, RuleSet after) {
    behind.rulesChanged(before, after);
  }

  @Override
  public CompletionStage<Boolean> ping() {
    return mode == Mode.UP ? behind.ping() : CompletableFuture.completedFuture(false);
  }

  @Override
  public String describe() {
    return "flaky(" + behind.describe() + ")";
  }

  @Override
  public void close() {
    if (!shared) {
      behind.close();
    }
  }
}
