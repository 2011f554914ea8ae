package dev.sluice.client;

import com.linecorp.armeria.client.ClientFactory;
import com.linecorp.armeria.client.Endpoint;
import com.linecorp.armeria.client.WebClient;
import com.linecorp.armeria.client.WebClientRequestPreparation;
import com.linecorp.armeria.client.endpoint.EndpointGroup;
import com.linecorp.armeria.client.endpoint.healthcheck.HealthCheckedEndpointGroup;
import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.SessionProtocol;
import dev.sluice.ItemDecision;
import dev.sluice.spi.Batch;
import dev.sluice.spi.Store;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * The store of a {@link SluiceClient}: each batch is one {@code POST /v1/acquire} to the service
 * instance that its first item's key hashes to ({@link RendezvousStrategy}) among the instances
 * whose {@code /readyz} answers 200 (Armeria's health-checked endpoint group). The service decides
 * on its own store and clock, unless the batch carries an explicit time.
 *
 * <p>Every call completes within the response timeout, with an answer or an error, as the store
 * SPI asks of a remote store: Armeria fails a request that gets no answer by then.
 */
final class ServiceStore implements Store {
  private final ClientFactory factory;
  private final HealthCheckedEndpointGroup healthy;
  /** The healthy instances as the client's selector sees them. */
  private final EndpointGroup routed;
  private final WebClient client;
  private final String adminToken;
  private final String description;
  /** Told of a rule the service says it does not know: the client's copy of the rules is stale. */
  private final Consumer<String> unknownRule;

  ServiceStore(List<Endpoint> endpoints, Duration responseTimeout, Duration healthCheckInterval, String adminToken,
      Consumer<String> unknownRule) {
    this.factory = ClientFactory.builder().connectTimeout(responseTimeout.multipliedBy(4)).build();
    this.healthy = HealthCheckedEndpointGroup.builder(EndpointGroup.of(endpoints), "/readyz")
        .clientFactory(factory)
        .protocol(SessionProtocol.HTTP)
        .retryInterval(healthCheckInterval)
        .allowEmptyEndpoints(true)
        // An empty group fails a request at once: failure modes decide, rather than the caller
        // waiting for an instance to come back.
        .selectionTimeoutMillis(0)
        .build();
    this.routed = new RoutedEndpoints(healthy);
    this.client = WebClient.builder(SessionProtocol.HTTP, routed)
        .factory(factory)
        .responseTimeout(responseTimeout)
        // A decision of 100 items with 512-byte keys is about 100 KiB; the rules are read with
        // a bound of their own.
        .maxResponseLength(1024L * 1024)
        .build();
    this.adminToken = adminToken;
    this.unknownRule = unknownRule;
    this.description = "the Sluice service at " + String.join(", ", endpoints.stream().map(Endpoint::authority).toList());
  }

  /**
   * Waits until every instance has been checked once and the selector sees those that passed, at
   * most {@code timeout}: a request sent earlier would be routed among the instances checked so
   * far, and its key would move once the others join.
   */
  void awaitFirstCheck(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      healthy.whenReady().get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
      routed.whenReady().get(Math.max(1, (deadline - System.nanoTime()) / 1_000_000),
          java.util.concurrent.TimeUnit.MILLISECONDS);
      while (!routed.endpoints().containsAll(healthy.endpoints()) && System.nanoTime() < deadline) {
        Thread.sleep(1);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      // No instance answered yet: requests fail over to the failure modes until one does.
    }
  }

  /** The instances that answer their readiness check now, as the selector sees them. */
  List<Endpoint> healthyEndpoints() {
    return routed.endpoints();
  }

  /** The instance that decides {@code key} now; null if none answers. */
  Endpoint instanceOf(String key) {
    return RendezvousStrategy.pick(routed.endpoints(), key);
  }

  WebClient client() {
    return client;
  }

  @Override
  public CompletionStage<List<ItemDecision>> decide(Batch batch) {
    String key = batch.items().get(0).key();
    return post("/v1/acquire", Wire.acquire(batch), key).thenApply(res -> {
      try {
        return Wire.decisions(res.status().code(), res.content().array(), batch, description);
      } catch (dev.sluice.UnknownRuleException e) {
        unknownRule.accept(e.rule());
        throw e;
      }
    });
  }

  @Override
  public CompletionStage<Void> reset(String rule, String key) {
    return post("/v1/reset", Wire.reset(rule, key), key).thenApply(res -> {
      if (res.status().code() != 200) {
        throw Wire.failure(res.status().code(), res.content().array(), null, description);
      }
      return null;
    });
  }

  private CompletableFuture<AggregatedHttpResponse> post(String path, byte[] body, String routeKey) {
    WebClientRequestPreparation req = client.prepare().post(path).content(MediaType.JSON_UTF_8, body)
        .attr(RendezvousStrategy.ROUTE_KEY, routeKey);
    if (adminToken != null && path.equals("/v1/reset")) {
      req.header(HttpHeaderNames.AUTHORIZATION, "Bearer " + adminToken);
    }
    return req.execute().aggregate().handle((res, err) -> {
      if (err != null) {
        Throwable c = err instanceof java.util.concurrent.CompletionException && err.getCause() != null
            ? err.getCause() : err;
        throw new ServiceUnavailableException(description + ": " + describe(c), c);
      }
      return res;
    });
  }

  private static String describe(Throwable c) {
    if (c instanceof com.linecorp.armeria.client.ResponseTimeoutException) {
      return "no answer within the response timeout";
    }
    if (c instanceof com.linecorp.armeria.client.endpoint.EmptyEndpointGroupException) {
      return "no instance answers its readiness check";
    }
    if (c instanceof com.linecorp.armeria.client.UnprocessedRequestException u && u.getCause() != null) {
      return "could not send the request: " + u.getCause().getMessage();
    }
    return String.valueOf(c.getMessage());
  }

  @Override
  public CompletionStage<Boolean> ping() {
    return CompletableFuture.completedFuture(!routed.endpoints().isEmpty());
  }

  @Override
  public String describe() {
    return description;
  }

  @Override
  public void close() {
    routed.close();
    healthy.close();
    factory.close();
  }
}
