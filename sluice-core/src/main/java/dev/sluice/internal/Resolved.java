package dev.sluice.internal;

import dev.sluice.ItemDecision;
import dev.sluice.OperationRequest;
import dev.sluice.Request;
import dev.sluice.internal.policy.LocalStep;
import dev.sluice.spi.Batch;

/**
 * A request after resolution and the local steps: the batch for the store and where each request
 * item went ({@code slot}, null when every item is distinct); for a request by operation, the
 * operation request it was made from. {@code pre} holds what the local steps decided, by distinct
 * item (null if nothing); {@code skipStore} says the store is not to be called (an enforced item
 * was denied here, or nothing is left to send).
 *
 * @param startMicros when the store is asked, for the local steps that learn with it
 *     ({@link dev.sluice.internal.policy.LocalItem#NO_START} if not read)
 */
record Resolved(Request request, Batch batch, int[] slot, OperationRequest operation, ItemDecision[] pre,
    LocalStep[] answeredBy, boolean skipStore, long startMicros) {

  Resolved(Request request, Batch batch, int[] slot, OperationRequest operation, long startMicros) {
    this(request, batch, slot, operation, null, null, false, startMicros);
  }
}
