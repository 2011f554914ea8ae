package dev.sluice.server.http;

import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.QueryParams;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.server.ServerBuilder;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.policy.Ban;
import dev.sluice.policy.KeyLimit;
import dev.sluice.policy.ListEntry;
import dev.sluice.policy.ListKind;
import dev.sluice.policy.Offender;
import dev.sluice.policy.Page;
import dev.sluice.policy.Policies;
import dev.sluice.server.StoreHealth;
import dev.sluice.server.config.ConfigReloader;
import dev.sluice.server.metrics.DecisionRates;
import dev.sluice.spi.LeaseBoard;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The dashboard: a static page at {@code /} (HTML, one script, one style sheet, from the jar) that
 * polls {@code GET /v1/dashboard} and draws its charts itself as SVG, so that nothing is fetched
 * from elsewhere.
 *
 * <p>Reading is open, as {@code /metrics} is: rule names, counts, the configuration's state and the
 * store's health. What names keys (top denied keys, bans, live limits) is in the answer only for a
 * caller the {@link AdminGuard} lets through, as the admin API that lists them is. The page changes
 * nothing itself: its controls call the admin API with the token typed into it.
 */
public final class DashboardApi {
  /** How often the page polls, told to it in each answer: a change shows within about a second. */
  static final int POLL_MILLIS = 1_000;
  /** Rules an answer lists by default, and at most. */
  static final int DEFAULT_RULES = 50;
  static final int MAX_RULES = 200;
  /** The longest rule filter read. */
  static final int MAX_FILTER_CHARS = 200;
  /** Bans, live limits and run-time entries of each access list listed: the admin API's first page of this many. */
  static final int POLICY_PAGE = 20;
  /** Rules whose top denied keys are shown, the most denying ones, and keys each. */
  static final int TOP_RULES = 3;
  static final int TOP_KEYS = 10;
  /** Instances of the fleet listed, most recently heard first. */
  static final int FLEET_ROWS = 50;
  private static final Set<String> PARAMS = Set.of("rule", "count");
  /** The policies' answers wait this long at most: a slow store leaves the rest of the page live. */
  private static final long POLICY_TIMEOUT_MILLIS = 1_000;
  /**
   * What every answer of the page's files says: its own origin only (no script, style or request
   * elsewhere, no inline script), never framed.
   */
  static final String CSP = "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
      + "frame-ancestors 'none'";

  private final RateLimiter limiter;
  private final ConfigReloader config;
  private final DecisionRates rates;
  private final StoreHealth storeHealth;
  private final MeterRegistry registry;
  private final AdminGuard admin;
  private final Optional<LeaseBoard> leaseBoard;

  /** @param leaseBoard the lease board of the limiter's store, for the leases shown; empty if none */
  public DashboardApi(RateLimiter limiter, ConfigReloader config, DecisionRates rates, StoreHealth storeHealth,
      MeterRegistry registry, AdminGuard admin, Optional<LeaseBoard> leaseBoard) {
    this.leaseBoard = leaseBoard;
    this.limiter = limiter;
    this.config = config;
    this.rates = rates;
    this.storeHealth = storeHealth;
    this.registry = registry;
    this.admin = admin;
  }

  /** Binds {@code /}, the page's files and {@code GET /v1/dashboard}. */
  public void bind(ServerBuilder sb) {
    staticFile(sb, "/", "index.html", MediaType.HTML_UTF_8);
    staticFile(sb, "/dashboard.js", "dashboard.js", MediaType.JAVASCRIPT_UTF_8);
    staticFile(sb, "/dashboard.css", "dashboard.css", MediaType.CSS_UTF_8);
    // With 10,000 rules an answer takes milliseconds of sorting and writing: off the event loops,
    // which go on deciding meanwhile.
    sb.route().get("/v1/dashboard").build((ctx, req) -> HttpResponse.of(CompletableFuture.supplyAsync(() -> {
      try {
        return answer(ctx, HttpApi.bearerToken(req.headers().get(HttpHeaderNames.AUTHORIZATION)));
      } catch (ApiException e) {
        return HttpApi.error(e);
      }
    }, ctx.blockingTaskExecutor())));
  }

  private static void staticFile(ServerBuilder sb, String path, String resource, MediaType type) {
    byte[] body;
    try (InputStream in = DashboardApi.class.getResourceAsStream("/dev/sluice/server/dashboard/" + resource)) {
      if (in == null) {
        throw new IllegalStateException("the jar lacks the dashboard's " + resource);
      }
      body = in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    // Revalidated on each load: a new version of the service shows its own page at once.
    ResponseHeaders headers = ResponseHeaders.builder(HttpStatus.OK).contentType(type)
        .set(HttpHeaderNames.CACHE_CONTROL, "no-cache")
        .set(HttpHeaderNames.CONTENT_SECURITY_POLICY, CSP)
        .set(HttpHeaderNames.X_CONTENT_TYPE_OPTIONS, "nosniff")
        .set(HttpHeaderNames.X_FRAME_OPTIONS, "DENY")
        .set("referrer-policy", "no-referrer").build();
    HttpData data = HttpData.wrap(body);
    sb.route().get(path).build((ctx, req) -> HttpResponse.of(headers, data));
  }

  private HttpResponse answer(ServiceRequestContext ctx, String token) throws ApiException {
    QueryParams q = PolicyApiHandler.query(ctx, PARAMS);
    String filter = q.get("rule", "");
    if (filter.length() > MAX_FILTER_CHARS) {
      throw ApiException.badRequest("invalid_request", "'rule' (a filter on rule names) must be at most "
          + MAX_FILTER_CHARS + " characters, was " + filter.length());
    }
    int count = intParam(q.get("count"), DEFAULT_RULES);
    DashboardView view = DashboardView.of(rates.read(), config.current(), config.status(), filter, count,
        storeHealth == null ? null : storeHealth.status(), StoreLatency.of(registry));
    boolean keys = mayReadKeys(token);
    Policies policies = keys ? policiesOrNull() : null;
    DashboardJson.Admin adminState = new DashboardJson.Admin(!admin.refusesAll(), admin.needsToken(), keys);
    List<Rule> leased = DashboardLeases.leased(config.current().rules().rules());
    CompletableFuture<DashboardJson.Fleet> fleet = fleet();
    // What this instance holds is found by its id: the leases are read once the fleet answered.
    CompletableFuture<DashboardJson.Leases> leases = !keys || leased.isEmpty() || leaseBoard.isEmpty()
        ? CompletableFuture.completedFuture(new DashboardJson.Leases(null, null, leased.size()))
        : fleet.thenCompose(f -> DashboardLeases.read(leaseBoard.get(), leased, f.view() == null ? null
            : f.view().self(), policies, config.current().rules()))
            .orTimeout(POLICY_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)
            .handle((v, err) -> err == null ? new DashboardJson.Leases(null, v, leased.size())
                : new DashboardJson.Leases("the store did not answer: " + rootMessage(err), null, leased.size()));
    if (policies == null) {
      return HttpResponse.of(fleet.thenCombine(leases, (f, l) -> json(DashboardJson.write(view, adminState, null,
          new DashboardJson.Panels(f, l)))));
    }
    CompletableFuture<Page<Ban>> bans = policies.bans(null, null, POLICY_PAGE).toCompletableFuture();
    CompletableFuture<Page<KeyLimit>> limits = policies.limits(null, null, POLICY_PAGE).toCompletableFuture();
    CompletableFuture<Page<ListEntry>> allowEntries = policies.lists(ListKind.ALLOW, null, POLICY_PAGE)
        .toCompletableFuture();
    CompletableFuture<Page<ListEntry>> denyEntries = policies.lists(ListKind.DENY, null, POLICY_PAGE)
        .toCompletableFuture();
    List<String> topRules = view.mostDenying(TOP_RULES);
    List<CompletableFuture<List<Offender>>> tops = new ArrayList<>();
    for (String rule : topRules) {
      tops.add(policies.top(rule, Duration.ofMinutes(5), TOP_KEYS).toCompletableFuture());
    }
    List<CompletableFuture<?>> all = new ArrayList<>(tops);
    all.add(bans);
    all.add(limits);
    all.add(allowEntries);
    all.add(denyEntries);
    CompletableFuture<HttpResponse> out = CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
        .orTimeout(POLICY_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)
        .handle((v, err) -> {
          DashboardJson.Keys k;
          if (err != null) {
            k = DashboardJson.Keys.failed("the store did not answer: " + rootMessage(err));
          } else {
            List<DashboardJson.Top> t = new ArrayList<>();
            for (int i = 0; i < topRules.size(); i++) {
              t.add(new DashboardJson.Top(topRules.get(i), tops.get(i).join()));
            }
            k = new DashboardJson.Keys(null, bans.join(), limits.join(), t, allowEntries.join(), denyEntries.join());
          }
          return k;
        })
        .thenCompose(k -> fleet.thenCombine(leases, (f, l) -> json(DashboardJson.write(view, adminState, k,
            new DashboardJson.Panels(f, l)))));
    return HttpResponse.of(out);
  }

  private static String rootMessage(Throwable t) {
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t instanceof java.util.concurrent.TimeoutException ? "no answer within " + POLICY_TIMEOUT_MILLIS + " ms"
        : t.getClass().getSimpleName();
  }

  /** The fleet as the limiter lists it; never fails: a store that did not answer is said so. */
  private CompletableFuture<DashboardJson.Fleet> fleet() {
    CompletableFuture<dev.sluice.FleetView> f;
    try {
      f = limiter.fleet(FLEET_ROWS).toCompletableFuture();
    } catch (UnsupportedOperationException e) {
      return CompletableFuture.completedFuture(new DashboardJson.Fleet(null, null));
    }
    return f.orTimeout(POLICY_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)
        .handle((v, err) -> err == null ? new DashboardJson.Fleet(null, v)
            : new DashboardJson.Fleet("the store did not answer: " + rootMessage(err), null));
  }

  private boolean mayReadKeys(String token) {
    try {
      admin.check("GET /v1/dashboard", token);
      return true;
    } catch (ApiException e) {
      return false;
    }
  }

  private Policies policiesOrNull() {
    try {
      return limiter.policies();
    } catch (UnsupportedOperationException e) {
      return null;
    }
  }

  private static int intParam(String s, int fallback) throws ApiException {
    if (s == null) {
      return fallback;
    }
    try {
      int n = Integer.parseInt(s);
      if (n >= 1 && n <= MAX_RULES) {
        return n;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw ApiException.badRequest("invalid_request", "'count' must be an integer from 1 to " + MAX_RULES
        + ", was '" + (s.length() > 20 ? s.substring(0, 20) + "..." : s) + "'");
  }

  private static HttpResponse json(byte[] body) {
    return HttpResponse.of(ResponseHeaders.builder(HttpStatus.OK).contentType(MediaType.JSON_UTF_8)
        .set(HttpHeaderNames.CACHE_CONTROL, "no-store").build(), HttpData.wrap(body));
  }
}
