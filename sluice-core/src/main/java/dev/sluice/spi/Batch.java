package dev.sluice.spi;

import dev.sluice.Request;
import java.util.List;

/**
 * What a store decides as one transaction: every enforced item fits and all fitting items are
 * consumed, or nothing is consumed. Items of shadow rules never block the others; a shadow item
 * that does not fit is not consumed.
 *
 * @param timeMicros explicit time in microseconds since the epoch, or {@link Request#STORE_CLOCK}
 */
public record Batch(List<ResolvedItem> items, long timeMicros) {
  public Batch {
    items = List.copyOf(items);
  }

  public boolean hasExplicitTime() {
    return timeMicros != Request.STORE_CLOCK;
  }
}
