package dev.sluice.internal.lease;

import dev.sluice.DecisionListener;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.spi.LeaseBoard;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One holder of leases on the store's lease board — a limiter's {@link LeaseStep}, or the
 * service's quota streams: its id, its usage reports (one in flight at a time), the sizes the
 * leader published for it read from each report's answer, and the leader's cycle it runs when no
 * leader's term runs or it leads. What a holder reports and what it makes of its sizes are its own.
 */
public final class LeaseHolder {
  private static final System.Logger LOG = System.getLogger(LeaseHolder.class.getName());

  private final LeaseBoard board;
  private final String id;
  private final int maxKeyBytes;
  private final LeaseLeader leader;
  private final AtomicBoolean reporting = new AtomicBoolean();
  private final AtomicBoolean cycling = new AtomicBoolean();

  /** What a report's answer gives a holder. */
  @FunctionalInterface
  public interface Adopter {
    /**
     * @param published the sizes published for the holder, null when there are none or they cannot
     *     be read (another version)
     */
    void adopt(LeaseBoard.ReportAnswer answer, SizeTable published);
  }

  /**
   * A holder whose leader tells no listener (the service's quota streams).
   *
   * @param tag part of the id that tells holders of one process apart ({@code "rlqs"}); empty for none
   * @param rules the rule in force by name, null if none: the leader sizes the keys of the rules it knows
   * @param maxKeyBytes the longest key read back from the sizes and, as leader, from the reports
   */
  public LeaseHolder(LeaseBoard board, String tag, Function<String, Rule> rules, int maxKeyBytes) {
    this(board, newId(tag), rules, Rule::windowsFor, maxKeyBytes, new LeaseEvents(new DecisionListener[0]));
  }

  /**
   * @param id the holder's id, made by {@link #newId}
   * @param windowsOf the windows a key of a rule is decided under (its live limit's, where it has one)
   */
  LeaseHolder(LeaseBoard board, String id, Function<String, Rule> rules, BiFunction<Rule, String, List<Window>> windowsOf,
      int maxKeyBytes, LeaseEvents events) {
    this.board = board;
    this.maxKeyBytes = maxKeyBytes;
    this.id = id;
    this.leader = new LeaseLeader(board, id, rules, windowsOf, maxKeyBytes, events);
  }

  /**
   * An id for an instance in the store: the process and 64 random bits, so that (id, token) is
   * unique; a limiter's heartbeats and leases go by the same one.
   *
   * @param tag tells holders of one process apart ({@code "rlqs"}); empty for none
   */
  public static String newId(String tag) {
    byte[] random = new byte[8];
    ThreadLocalRandom.current().nextBytes(random);
    return ProcessHandle.current().pid() + (tag.isEmpty() ? "-" : "-" + tag + "-") + HexFormat.of().formatHex(random);
  }

  /** This holder's id on the lease board. */
  public String id() {
    return id;
  }

  /** Whether this holder led at its last leader cycle. */
  public boolean leads() {
    return leader.leads();
  }

  /**
   * Sends a usage report, made by {@code report} (for {@code termMillis}: kept for two terms),
   * unless one is in flight: false then, and {@code report} is not called, so that counts it
   * resets are not lost. On the answer, {@code adopt}; then a leader cycle when no leader's term
   * runs or this holder leads — and, when the report fails, if it led: its campaign fails too,
   * and it steps down rather than believe it leads. {@code after} runs last once the answer came,
   * either way.
   */
  public boolean report(long termMillis, Supplier<byte[]> report, Adopter adopt, Runnable after) {
    if (!reporting.compareAndSet(false, true)) {
      return false;
    }
    try {
      board.report(id, report.get(), 2 * termMillis).whenComplete((answer, err) -> {
        try {
          if (err == null) {
            adopt.adopt(answer, published(answer));
            LeaseBoard.Leader l = answer.leader();
            boolean inForce = l.instance() != null && l.untilMillis() > l.nowMillis();
            if (!inForce || id.equals(l.instance())) {
              lead(termMillis);
            }
          } else if (leader.leads()) {
            lead(termMillis);
          }
        } finally {
          reporting.set(false);
          after.run();
        }
      });
    } catch (RuntimeException e) {
      reporting.set(false);
    }
    return true;
  }

  private SizeTable published(LeaseBoard.ReportAnswer answer) {
    if (answer.sizes().length == 0) {
      return null;
    }
    try {
      return SizeTable.decode(answer.sizes(), maxKeyBytes);
    } catch (IllegalArgumentException e) {
      LOG.log(System.Logger.Level.DEBUG, "sizes this holder cannot read: " + e.getMessage());
      return null;
    }
  }

  private void lead(long termMillis) {
    if (!cycling.compareAndSet(false, true)) {
      return;
    }
    try {
      leader.cycle(termMillis).whenComplete((v, e) -> cycling.set(false));
    } catch (RuntimeException e) {
      cycling.set(false);
    }
  }

  /**
   * Resigns if it leads, so that another is elected at once (with a cycle in flight, when the term
   * ends); no cycle starts afterwards.
   */
  public CompletableFuture<Void> resign() {
    if (cycling.compareAndSet(false, true)) {
      return leader.resign();
    }
    return CompletableFuture.completedFuture(null);
  }
}
