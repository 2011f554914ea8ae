package dev.sluice.client;

import com.linecorp.armeria.client.Endpoint;
import com.linecorp.armeria.common.AggregatedHttpResponse;
import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.OperationRequest;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link RateLimiter} whose decisions are made by running {@code sluice serve} instances, over
 * their HTTP JSON API: an application switches between the embedded library, Redis and the
 * service by what it builds, and the rest of its code stays the same.
 *
 * <pre>{@code
 * RateLimiter limiter = SluiceClient.builder().endpoints("10.0.0.5:8080", "10.0.0.6:8080").build();
 * Decision d = limiter.acquire("auth.createToken", "ip:10.0.0.1");
 * }</pre>
 *
 * <p>It is the library's own limiter ({@code Sluice.builder()}) on a store that asks the service,
 * so the store timeout, the bound on calls in flight, each rule's {@code failure_mode} and the
 * denial cache work exactly as they do over Redis: the service down, slow or over capacity is
 * an outage, decided by the rules' failure modes and marked degraded.
 *
 * <p>The rules are the service's: read from {@code GET /v1/rules} at build and again every
 * {@link Builder#rulesRefresh}, and at once when the service names a rule the client does not
 * know. {@link #updateRules} is refused; change the service's configuration instead. Each
 * request goes to the instance its first item's key hashes to among the instances that pass
 * their readiness check ({@code /readyz}), so one key's requests meet one instance's caches and
 * an instance that leaves moves only its own keys.
 */
public final class SluiceClient implements RateLimiter {
  private final RateLimiter limiter;
  private final ServiceStore store;
  private final ScheduledExecutorService refresher;
  private final AtomicBoolean refreshQueued = new AtomicBoolean();
  private final Duration timeout;

  private SluiceClient(Builder b) {
    this.timeout = b.storeTimeout;
    this.store = new ServiceStore(b.endpoints, b.storeTimeout, b.healthCheckInterval, b.adminToken,
        rule -> refreshSoon());
    try {
      store.awaitFirstCheck(b.startTimeout);
      RuleSet rules = fetchRules(b.startTimeout);
      this.limiter = b.limiter.store(store).rules(rules).build();
    } catch (RuntimeException e) {
      store.close();
      throw e;
    }
    this.refresher = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sluice-client-rules");
      t.setDaemon(true);
      return t;
    });
    long every = b.rulesRefresh.toMillis();
    refresher.scheduleWithFixedDelay(this::refreshQuietly, every, every, TimeUnit.MILLISECONDS);
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Reads the service's rules now and puts them in force here if they changed.
   *
   * @throws ServiceUnavailableException if no instance answers with its rules
   */
  public void refreshRules() {
    RuleSet next = fetchRules(timeout.multipliedBy(8));
    synchronized (this) {
      if (!next.equals(limiter.rules())) {
        limiter.updateRules(next);
      }
    }
  }

  private void refreshQuietly() {
    refreshQueued.set(false);
    try {
      refreshRules();
    } catch (RuntimeException e) {
      // The rules in force stay; the next refresh tries again.
    }
  }

  /** A refresh as soon as the refresher is free, at most one queued at a time. */
  private void refreshSoon() {
    if (refresher != null && refreshQueued.compareAndSet(false, true)) {
      try {
        refresher.execute(this::refreshQuietly);
      } catch (java.util.concurrent.RejectedExecutionException closed) {
        // Closing: nothing left to refresh.
      }
    }
  }

  private RuleSet fetchRules(Duration wait) {
    AggregatedHttpResponse res;
    try {
      // The service reads at most 16 MiB of configuration files; their rules in JSON stay well within 64 MiB.
      res = store.client().prepare().get("/v1/rules").responseTimeout(wait).maxResponseLength(64L * 1024 * 1024)
          .execute().aggregate()
          .get(wait.toMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServiceUnavailableException(store.describe() + ": interrupted while reading the rules", e);
    } catch (Exception e) {
      Throwable c = e.getCause() != null ? e.getCause() : e;
      throw new ServiceUnavailableException(store.describe() + ": could not read the rules (GET /v1/rules): "
          + c.getMessage(), c);
    }
    if (res.status().code() != 200) {
      throw new ServiceUnavailableException(store.describe() + ": GET /v1/rules answered " + res.status());
    }
    try {
      return RulesReader.read(res.content().array()).rules();
    } catch (java.io.IOException | RuntimeException e) {
      throw new ServiceUnavailableException(store.describe() + ": GET /v1/rules answered rules this client cannot "
          + "read: " + e.getMessage(), e);
    }
  }

  /** The instance that decides {@code key} now ({@code host:port}); null if no instance is ready. */
  public String instanceOf(String key) {
    Endpoint e = store.instanceOf(key);
    return e == null ? null : e.authority();
  }

  /** The instances that pass their readiness check now, as {@code host:port}. */
  public List<String> readyInstances() {
    return store.healthyEndpoints().stream().map(Endpoint::authority).toList();
  }

  @Override
  public Decision acquire(Request request) {
    return limiter.acquire(request);
  }

  @Override
  public Decision acquire(OperationRequest request) {
    return limiter.acquire(request);
  }

  @Override
  public Decision acquire(String rule, String key, long cost) {
    return limiter.acquire(rule, key, cost);
  }

  @Override
  public Decision acquire(String rule, String key) {
    return limiter.acquire(rule, key);
  }

  @Override
  public boolean tryAcquire(String rule, String key, long cost) {
    return limiter.tryAcquire(rule, key, cost);
  }

  @Override
  public boolean tryAcquire(OperationRequest request) {
    return limiter.tryAcquire(request);
  }

  @Override
  public CompletionStage<Boolean> tryAcquireAsync(String rule, String key, long cost) {
    return limiter.tryAcquireAsync(rule, key, cost);
  }

  @Override
  public CompletionStage<Decision> acquireAsync(Request request) {
    return limiter.acquireAsync(request);
  }

  @Override
  public CompletionStage<Decision> acquireAsync(OperationRequest request) {
    return limiter.acquireAsync(request);
  }

  @Override
  public Decision acquireBlocking(Request request, Duration timeout) throws InterruptedException {
    return limiter.acquireBlocking(request, timeout);
  }

  @Override
  public Decision acquireBlocking(OperationRequest request, Duration timeout) throws InterruptedException {
    return limiter.acquireBlocking(request, timeout);
  }

  /** Resets the key on the instance that decides it ({@code POST /v1/reset}, an admin endpoint). */
  @Override
  public CompletionStage<Void> reset(String rule, String key) {
    return limiter.reset(rule, key);
  }

  @Override
  public RuleSet rules() {
    return limiter.rules();
  }

  /**
   * Refused: the rules are the service's, read from it ({@link #refreshRules}).
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  public void updateRules(RuleSet rules) {
    throw new UnsupportedOperationException("the rules of " + store.describe() + " are its configuration's: "
        + "change them there; the client reads them again within its rules refresh");
  }

  /** Whether some instance passes its readiness check. */
  @Override
  public CompletionStage<Boolean> ping() {
    return limiter.ping();
  }

  @Override
  public void close() {
    refresher.shutdownNow();
    limiter.close();
  }

  /** Builds a {@link SluiceClient}. Not thread-safe. */
  public static final class Builder {
    private final List<Endpoint> endpoints = new ArrayList<>();
    private Duration storeTimeout = Duration.ofMillis(250);
    private Duration rulesRefresh = Duration.ofSeconds(5);
    private Duration healthCheckInterval = Duration.ofSeconds(1);
    private Duration startTimeout = Duration.ofSeconds(5);
    private String adminToken;
    /**
     * The settings of the library's limiter that the client is, checked by its own builder as they
     * are given (the same bounds, the same messages); its store and rules are the service's, set
     * at {@link #build}.
     */
    private final Sluice.Builder limiter = Sluice.builder();

    private Builder() {}

    /**
     * The service's instances, each {@code host:port} ({@code [::1]:8080} for an IPv6 address).
     *
     * @throws IllegalArgumentException for an address without a port, or a port out of range
     */
    public Builder endpoints(String... hostPorts) {
      for (String hp : hostPorts) {
        Endpoint e;
        try {
          e = Endpoint.parse(Objects.requireNonNull(hp, "endpoint"));
        } catch (IllegalArgumentException bad) {
          throw new IllegalArgumentException("'" + hp + "' is not host:port", bad);
        }
        if (!e.hasPort()) {
          throw new IllegalArgumentException("'" + hp + "' has no port; write host:port");
        }
        endpoints.add(e);
      }
      return this;
    }

    /** @see #endpoints(String...) */
    public Builder endpoint(String host, int port) {
      if (port < 1 || port > 65535) {
        throw new IllegalArgumentException("port must be between 1 and 65535, was " + port);
      }
      endpoints.add(Endpoint.of(host, port));
      return this;
    }

    /**
     * How long the service may take before failure modes decide; default 250 ms. Also the HTTP
     * response timeout, after which a call stops counting against {@link #maxInFlight}.
     */
    public Builder storeTimeout(Duration d) {
      limiter.storeTimeout(d);
      this.storeTimeout = d;
      return this;
    }

    /** How often the service's rules are read again; default 5 s. */
    public Builder rulesRefresh(Duration d) {
      if (d.toMillis() < 10) {
        throw new IllegalArgumentException("rulesRefresh must be at least 10 ms, was " + d);
      }
      this.rulesRefresh = d;
      return this;
    }

    /**
     * How often each instance's {@code /readyz} is asked; default 1 s. An instance that fails it
     * leaves the routing until it passes again: its keys go to the other instances meanwhile.
     */
    public Builder healthCheckInterval(Duration d) {
      if (d.toMillis() < 10) {
        throw new IllegalArgumentException("healthCheckInterval must be at least 10 ms, was " + d);
      }
      this.healthCheckInterval = d;
      return this;
    }

    /** How long {@link #build} waits for the first readiness checks and the rules; default 5 s. */
    public Builder startTimeout(Duration d) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("startTimeout must be > 0, was " + d);
      }
      this.startTimeout = d;
      return this;
    }

    /** As {@link Sluice.Builder#maxInFlight}. */
    public Builder maxInFlight(int n) {
      limiter.maxInFlight(n);
      return this;
    }

    /** As {@link Sluice.Builder#denialCache}: denials this client answers without a round trip. */
    public Builder denialCache(int keys) {
      limiter.denialCache(keys);
      return this;
    }

    /** As {@link Sluice.Builder#maxKeyBytes}; keep it at most the service's (512). */
    public Builder maxKeyBytes(int n) {
      limiter.maxKeyBytes(n);
      return this;
    }

    /**
     * The share of each limit that {@code failure_mode: local} holds in this client while the
     * service is unreachable; default 1 (this client alone). With N clients, 1/N.
     */
    public Builder localShare(double share) {
      limiter.localShare(share);
      return this;
    }

    /** The token of the service's admin endpoints, sent with {@link SluiceClient#reset}. */
    public Builder adminToken(String token) {
      this.adminToken = token;
      return this;
    }

    /** The clock of the denial cache and of the local fallback (tests). */
    public Builder ticker(Ticker t) {
      limiter.ticker(t);
      return this;
    }

    public Builder listener(DecisionListener l) {
      limiter.listener(l);
      return this;
    }

    /**
     * Connects, waits for the instances' first readiness checks and reads the rules.
     *
     * @throws IllegalStateException without endpoints
     * @throws ServiceUnavailableException if no instance answered with its rules within the start
     *     timeout
     */
    public SluiceClient build() {
      if (endpoints.isEmpty()) {
        throw new IllegalStateException("a client needs at least one endpoint (host:port) of the service");
      }
      return new SluiceClient(this);
    }
  }
}
