package dev.sluice.server.http;

import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.ExchangeType;
import com.linecorp.armeria.common.HttpHeaderNames;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.RoutingContext;
import com.linecorp.armeria.server.ServerBuilder;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.sluice.policy.Policies;
import dev.sluice.RateLimiter;
import dev.sluice.RuleSet;
import dev.sluice.spi.LeaseBoard;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The admin endpoints of the policies kept in the store ({@link Policies}): live limits, bans,
 * access lists, audit and top offenders; and the lease board's view of a leased rule across
 * instances. Every one is behind the {@link AdminGuard}, as
 * {@code POST /v1/reset} is, including the reads: they tell who uses the service.
 *
 * <p>Path segments are percent-decoded one by one, so a key holding {@code /} is written with
 * {@code %2F}. Bodies are read strictly (the fields named here and nothing else); a refused
 * request is a {@code 400} naming the field, and changes nothing: every check is made before
 * the store is called, by the handlers or by the limiter.
 *
 * <p>This class is the routing: every admin path and its methods, in {@link #bind}, each served
 * by the handler of its resource ({@link PolicyApiLimits}, {@link PolicyApiBans},
 * {@link PolicyApiLists}, {@link PolicyApiRecords}, {@link PolicyApiLeases}) behind the guard.
 */
final class PolicyApi {
  private final Supplier<Policies> policies;
  private final Supplier<RuleSet> rules;
  private final Supplier<Optional<LeaseBoard>> leaseBoard;
  private final AdminGuard admin;
  private final Clock clock;

  /**
   * The policies of {@code limiter}, asked for on each request: a store that keeps none answers
   * 503; and {@code leaseBoard}, the board of the limiter's store (empty: {@code /v1/leases}
   * answers 501).
   */
  PolicyApi(RateLimiter limiter, Optional<LeaseBoard> leaseBoard, AdminGuard admin) {
    this(limiter::policies, limiter::rules, () -> leaseBoard, admin, Clock.systemUTC());
  }

  /** Over given policies, for tests of the mapping alone. */
  PolicyApi(Policies policies, Supplier<RuleSet> rules, AdminGuard admin, Clock clock) {
    this(() -> policies, rules, Optional::empty, admin, clock);
  }

  private PolicyApi(Supplier<Policies> policies, Supplier<RuleSet> rules, Supplier<Optional<LeaseBoard>> leaseBoard,
      AdminGuard admin, Clock clock) {
    this.policies = policies;
    this.rules = rules;
    this.leaseBoard = leaseBoard;
    this.admin = admin;
    this.clock = clock;
  }

  /**
   * Binds the routes.
   *
   * @param maxBodyBytes the largest body read
   * @param otherFailure answers a failure that is not a refusal of the request (a store error)
   */
  void bind(ServerBuilder sb, long maxBodyBytes, Function<Throwable, HttpResponse> otherFailure) {
    PolicyApiLimits limits = new PolicyApiLimits(policies, rules, clock, otherFailure);
    PolicyApiBans bans = new PolicyApiBans(policies, rules, clock, otherFailure);
    PolicyApiLists lists = new PolicyApiLists(policies, rules, clock, otherFailure);
    PolicyApiRecords records = new PolicyApiRecords(policies, rules, clock, otherFailure);
    PolicyApiLeases leases = new PolicyApiLeases(policies, rules, leaseBoard, clock, otherFailure);
    sb.route().get("/v1/limits").build(service("/v1/limits", limits, limits::listLimits, otherFailure));
    sb.route().pathPrefix("/v1/limits/").methods(HttpMethod.GET, HttpMethod.PUT, HttpMethod.DELETE)
        .maxRequestLength(maxBodyBytes).build(service("/v1/limits", limits, limits::limit, otherFailure));
    sb.route().get("/v1/bans").build(service("/v1/bans", bans, bans::listBans, otherFailure));
    sb.route().pathPrefix("/v1/bans/").methods(HttpMethod.GET, HttpMethod.PUT, HttpMethod.DELETE)
        .maxRequestLength(maxBodyBytes).build(service("/v1/bans", bans, bans::ban, otherFailure));
    sb.route().pathPrefix("/v1/lists/").methods(HttpMethod.GET, HttpMethod.PUT, HttpMethod.DELETE)
        .maxRequestLength(maxBodyBytes).build(service("/v1/lists", lists, lists::list, otherFailure));
    sb.route().pathPrefix("/v1/audit/").methods(HttpMethod.GET)
        .build(service("/v1/audit", records, records::audit, otherFailure));
    sb.route().get("/v1/top").build(service("/v1/top", records, records::top, otherFailure));
    sb.route().get("/v1/leases").build(service("/v1/leases", leases, leases::leases, otherFailure));
  }

  private interface Handler {
    HttpResponse handle(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException;
  }

  /** The guard, then {@code h} on the whole (bounded) request; every failure a JSON error. */
  private HttpService service(String endpoint, PolicyApiHandler owner, Handler h,
      Function<Throwable, HttpResponse> otherFailure) {
    return new HttpService() {
      @Override
      public HttpResponse serve(ServiceRequestContext ctx, HttpRequest req) {
        CompletableFuture<AggregatedHttpRequest> body = req.aggregate();
        return HttpResponse.of(body.thenApply(agg -> handle(endpoint, owner, h, ctx, agg)).exceptionally(otherFailure));
      }

      @Override
      public ExchangeType exchangeType(RoutingContext routingContext) {
        return ExchangeType.UNARY;
      }
    };
  }

  private HttpResponse handle(String endpoint, PolicyApiHandler owner, Handler h, ServiceRequestContext ctx,
      AggregatedHttpRequest req) {
    try {
      admin.check(req.method() + " " + endpoint, HttpApi.bearerToken(req.headers().get(HttpHeaderNames.AUTHORIZATION)));
      String encoding = req.headers().get(HttpHeaderNames.CONTENT_ENCODING);
      if (encoding != null && !encoding.strip().equalsIgnoreCase("identity")) {
        throw new ApiException(415, "unsupported_encoding", "the admin endpoints read bodies as they are; "
            + "send them without Content-Encoding");
      }
      return h.handle(ctx, req);
    } catch (ApiException e) {
      return HttpApi.error(e);
    } catch (RuntimeException e) {
      return owner.failure(e, "invalid_request");
    }
  }

  static String percentDecoded(String s) throws ApiException {
    return PathSegments.decoded(s, "key");
  }
}
