package dev.sluice.spi;

import dev.sluice.Algorithm;
import dev.sluice.ItemDecision;
import java.util.concurrent.CompletionStage;

/**
 * Units taken out of a key's exact state for an instance to admit locally (leased mode, see
 * docs/scaling.md), and given back unused; offered by {@link Store#grants()}. A take is an ordinary
 * admission of the units it grants: the store's accounting never admits more than the limit,
 * whoever uses them.
 *
 * <p>Every stage completes within a bounded time, as {@link Store#decide}'s.
 */
public interface Grants {

  /**
   * Takes up to {@code units} units for {@code item} (its cost is ignored) on the store's clock:
   * the largest whole count g ≤ {@code units} that fits every window now, committed as one
   * admission of cost g, all or nothing (g may be 0: nothing is committed). The answer holds g,
   * the store's time, the item's report after the take (as {@link Store#decide} reports an
   * admission of cost g, or the denial of one unit when g is 0) and what {@link #giveBack} needs.
   *
   * @throws IllegalArgumentException (failing the stage) if {@code units} is not positive, or the
   *     rule's algorithm cannot be leased ({@code leaky_bucket})
   */
  CompletionStage<Grant> take(ResolvedItem item, long units);

  /**
   * Gives back {@code units} (1 ≤ units ≤ the grant's) of {@code grant}, taken for {@code item}
   * with the same windows, as if they had never been admitted — as far as the key's state can
   * still tell them apart: units the windows no longer count are not given back twice, and a
   * fixed window that has ended frees nothing. Each grant is given back at most once.
   */
  CompletionStage<Void> giveBack(ResolvedItem item, Grant grant, long units);

  /**
   * Refuses what no take may ask, as every store's {@link #take} does: a count that is not
   * positive, an algorithm whose units cannot be leased.
   *
   * @throws IllegalArgumentException naming the rule and what was wrong
   */
  static void checkTake(ResolvedItem item, long units) {
    if (units <= 0) {
      throw new IllegalArgumentException("units to take for rule " + item.rule().name() + " must be positive, got "
          + units);
    }
    if (item.rule().algorithm() == Algorithm.LEAKY_BUCKET) {
      throw new IllegalArgumentException("rule " + item.rule().name()
          + " is a leaky_bucket: its units cannot be leased (use token_bucket for a smooth rate)");
    }
  }

  /**
   * Refuses a give-back of a count outside 1 ≤ units ≤ the grant's, as every store's
   * {@link #giveBack} does.
   *
   * @throws IllegalArgumentException naming the rule and what was wrong
   */
  static void checkGiveBack(ResolvedItem item, Grant grant, long units) {
    if (units <= 0 || units > grant.units()) {
      throw new IllegalArgumentException("units to give back for rule " + item.rule().name() + " must be 1 to "
          + grant.units() + ", the grant's, got " + units);
    }
  }

  /**
   * A take's answer.
   *
   * @param units the units granted, 0 to the units asked for
   * @param atMicros the store's time of the take
   * @param report the item's decision after the take
   * @param undo what the store needs to give the units back: opaque to everyone else
   */
  record Grant(long units, long atMicros, ItemDecision report, Object undo) {}
}
