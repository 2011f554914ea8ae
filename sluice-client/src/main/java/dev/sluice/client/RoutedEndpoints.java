package dev.sluice.client;

import com.linecorp.armeria.client.Endpoint;
import com.linecorp.armeria.client.endpoint.DynamicEndpointGroup;
import com.linecorp.armeria.client.endpoint.EndpointGroup;
import java.util.List;
import java.util.function.Consumer;

/**
 * The instances of a health-checked group, selected by {@link RendezvousStrategy}. Armeria's
 * health-checked group takes no selection strategy of its own, and {@code EndpointGroup.of(strategy,
 * group)} of a single group answers that group itself, strategy and all: this group follows the
 * healthy instances and selects with the rendezvous strategy. Empty when none is healthy, and a
 * request then fails at once (no selection timeout), so that failure modes decide without waiting.
 */
final class RoutedEndpoints extends DynamicEndpointGroup {
  private final EndpointGroup source;
  private final Consumer<List<Endpoint>> follow = this::setEndpoints;

  RoutedEndpoints(EndpointGroup source) {
    super(RendezvousStrategy.INSTANCE, true, 0);
    this.source = source;
    source.addListener(follow);
    setEndpoints(source.endpoints());
  }

  @Override
  protected void doCloseAsync(java.util.concurrent.CompletableFuture<?> future) {
    source.removeListener(follow);
    future.complete(null);
  }
}
