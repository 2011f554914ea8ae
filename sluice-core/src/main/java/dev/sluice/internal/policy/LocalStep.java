package dev.sluice.internal.policy;

import dev.sluice.ItemDecision;
import dev.sluice.Rule;
import dev.sluice.spi.ResolvedItem;

/**
 * One thing the limiter knows in process about a request's items, between their resolution and
 * the store: before the store it may answer an item (which is then not sent) or shape it (its
 * windows); after the store it may learn from the store's answer. The limiter runs its steps in
 * the order it was given them, per item; the first answer wins and the later steps do not see
 * the item.
 *
 * <p>Steps are consulted only for requests they may act on ({@link #acts}): a request none of
 * whose items any step acts on goes to the store as resolved, with nothing allocated for it.
 */
public interface LocalStep {

  /**
   * Whether this step may answer or shape an item of {@code rule} now. Asked for every request,
   * so a quick look that allocates nothing.
   */
  boolean acts(Rule rule);

  /**
   * What {@link #acts} reads. Steps of the same source answer it alike, so the limiter asks only
   * the first of them: steps over one cache cost one look together.
   */
  default Object source() {
    return this;
  }

  /**
   * Before the store: a decision for {@code item} (it is then not sent to the store), or null to
   * pass it on, possibly shaped ({@link LocalItem#windows(java.util.List)}).
   */
  ItemDecision before(LocalItem item);

  /**
   * The request an item this step admitted ({@code answered}, its answer from {@link #before})
   * belongs to ended denied: what the admission took is put back. Called at most once per answer.
   */
  default void undo(ItemDecision answered) {}

  /** Whether {@link #after} is to be called: fixed for the step's life. */
  default boolean learns() {
    return false;
  }

  /**
   * Whether it learns from the store's answers for items of {@code rule}: {@link #learns} unless
   * the step knows that such answers never teach it anything.
   */
  default boolean learnsFrom(Rule rule) {
    return learns();
  }

  /**
   * After the store decided {@code sent} (not degraded): learns from its decision {@code decided}.
   * Called on the deciding thread for every item sent, whether or not {@link #acts} held.
   *
   * @param startMicros when the store was asked, on the limiter's clock; {@link LocalItem#NO_START}
   *     for a request at an explicit time, or when no step asks for it ({@link #timed})
   */
  default void after(ResolvedItem sent, ItemDecision decided, long startMicros) {}

  /** Whether this step needs the time before the store is asked, as {@code startMicros}. */
  default boolean timed() {
    return false;
  }
}
