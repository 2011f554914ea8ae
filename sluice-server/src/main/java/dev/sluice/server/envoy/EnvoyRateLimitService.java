package dev.sluice.server.envoy;

import com.google.protobuf.Duration;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Item;
import dev.sluice.ItemDecision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.UnknownRuleException;
import dev.sluice.Window;
import dev.sluice.WindowState;
import dev.sluice.config.envoy.EnvoyDomain;
import dev.sluice.config.envoy.EnvoyEntry;
import dev.sluice.config.envoy.EnvoyLimit;
import dev.sluice.config.envoy.EnvoyMatch;
import dev.sluice.config.envoy.EnvoyResolution;
import dev.sluice.config.envoy.EnvoyUnit;
import dev.sluice.server.http.ClientMessages;
import dev.sluice.internal.log.ThrottledLog;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.envoyproxy.envoy.type.v3.RateLimitUnit;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Envoy's {@code envoy.service.ratelimit.v3.RateLimitService}. A request's descriptors are
 * resolved against the domain ({@link EnvoyDomain#resolve}) as Envoy's own service matches them,
 * and then —
 * unlike Envoy's service, which counts each descriptor on its own — decided as one Sluice
 * request: every matched limit is consumed, or none is. A request that one descriptor denies
 * therefore costs nothing in the others. A descriptor's own {@code limit} (Envoy's
 * {@code RateLimitOverride}) replaces its rule's windows for that request.
 */
public final class EnvoyRateLimitService extends RateLimitServiceGrpc.RateLimitServiceImplBase {
  private static final Logger LOG = LoggerFactory.getLogger(EnvoyRateLimitService.class);
  private static final long UINT32_MAX = 0xFFFF_FFFFL;
  /**
   * The most descriptors a request may have, as the HTTP API bounds its items: Envoy sends a few
   * per request, and each is decided and answered, so a request of a million (10 MiB) would hold
   * an event loop for seconds.
   */
  static final int MAX_DESCRIPTORS = 100;
  /** envoyproxy/ratelimit's default names of its response headers. */
  static final String LIMIT_HEADER = "RateLimit-Limit";
  static final String REMAINING_HEADER = "RateLimit-Remaining";
  static final String RESET_HEADER = "RateLimit-Reset";

  private final RateLimiter limiter;
  private final Supplier<Map<String, EnvoyDomain>> domains;
  private final java.time.Clock clock;
  private final EnvoyOptions options;
  /** Decisions that failed in the store: a line per kind every 10 s, however many calls fail. */
  private final ThrottledLog failures = new ThrottledLog(LOG::warn);

  /**
   * @param domains the Envoy domains in force, read on every request (they change on reload)
   */
  public EnvoyRateLimitService(RateLimiter limiter, Supplier<Map<String, EnvoyDomain>> domains,
      EnvoyOptions options) {
    this(limiter, domains, options, java.time.Clock.systemUTC());
  }

  EnvoyRateLimitService(RateLimiter limiter, Supplier<Map<String, EnvoyDomain>> domains, EnvoyOptions options,
      java.time.Clock clock) {
    this.limiter = limiter;
    this.domains = domains;
    this.options = options;
    this.clock = clock;
  }

  /**
   * A request's descriptors matched to limits, and the Sluice items they became; per descriptor,
   * the window its {@code limit} override gives for this request, or null.
   */
  private record Plan(RateLimitRequest request, EnvoyLimit[] limits, int[] itemOf, List<Item> items,
      Window[] overrides) {}

  @Override
  public void shouldRateLimit(RateLimitRequest request, StreamObserver<RateLimitResponse> out) {
    Plan plan;
    try {
      plan = plan(request);
    } catch (IllegalArgumentException e) {
      out.onError(Status.INVALID_ARGUMENT.withDescription(ClientMessages.of(e, "the request is not valid"))
          .asRuntimeException());
      return;
    }
    if (plan.items.isEmpty()) {
      respond(out, plan, null);
      return;
    }
    decide(plan, out, true);
  }

  private void decide(Plan plan, StreamObserver<RateLimitResponse> out, boolean mayRetry) {
    limiter.acquireAsync(Request.of(plan.items)).whenComplete((d, err) -> {
      if (err == null) {
        respond(out, plan, d);
        return;
      }
      Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
      if (cause instanceof UnknownRuleException && mayRetry) {
        // A reload removed a rule between matching and deciding: match again on the new config.
        Plan again;
        try {
          again = plan(plan.request);
        } catch (IllegalArgumentException e) {
          out.onError(Status.INVALID_ARGUMENT.withDescription(ClientMessages.of(e, "the request is not valid"))
              .asRuntimeException());
          return;
        }
        if (again.items.isEmpty()) {
          respond(out, again, null);
        } else {
          decide(again, out, false);
        }
      } else if (cause instanceof IllegalArgumentException || cause instanceof ArithmeticException) {
        // The limiter's refusals (an unknown rule still, a key too long, costs that overflow) and
        // the store's are the request's own: retrying them would fail the same way.
        out.onError(Status.INVALID_ARGUMENT.withDescription(ClientMessages.of(cause, "the request is not valid"))
            .asRuntimeException());
      } else {
        failures.log(cause.getClass().getName(), () -> "rate limit decision failed: " + cause);
        out.onError(Status.UNAVAILABLE.withDescription("the decision failed").asRuntimeException());
      }
    });
  }

  private Plan plan(RateLimitRequest request) {
    if (request.getDomain().isEmpty()) {
      throw new IllegalArgumentException("rate limit domain must not be empty");
    }
    int n = request.getDescriptorsCount();
    if (n == 0) {
      throw new IllegalArgumentException("rate limit descriptor list must not be empty");
    }
    if (n > MAX_DESCRIPTORS) {
      throw new IllegalArgumentException("the request has " + n + " descriptors; the maximum is " + MAX_DESCRIPTORS);
    }
    EnvoyDomain domain = domains.get().get(request.getDomain());
    EnvoyLimit[] limits = new EnvoyLimit[n];
    String[] keys = new String[n];
    boolean blocked = false;
    if (domain != null) {
      List<List<EnvoyEntry>> descriptors = new ArrayList<>(n);
      for (RateLimitDescriptor d : request.getDescriptorsList()) {
        descriptors.add(entries(d));
      }
      EnvoyResolution r = domain.resolve(descriptors);
      for (int i = 0; i < n; i++) {
        EnvoyMatch m = r.matches().get(i);
        if (m != null) {
          limits[i] = m.limit();
          keys[i] = m.key();
        }
      }
      blocked = r.blocked();
    }
    long requestHits = request.getHitsAddend() == 0 ? 1 : Integer.toUnsignedLong(request.getHitsAddend());
    Window[] overrides = new Window[n];
    for (int i = 0; i < n; i++) {
      overrides[i] = override(request.getDescriptors(i), i);
    }
    int[] itemOf = new int[n];
    List<Item> items = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      itemOf[i] = -1;
      EnvoyLimit l = limits[i];
      if (l == null || l.rule() == null) {
        continue;
      }
      RateLimitDescriptor desc = request.getDescriptors(i);
      long hits = requestHits;
      if (desc.hasHitsAddend()) {
        hits = desc.getHitsAddend().getValue();
        if (hits < 0) {
          throw new IllegalArgumentException("hits_addend of descriptor " + i + " is too large");
        }
      }
      itemOf[i] = items.size();
      // A blocked limit denies the whole request; the others are only looked at (cost 0), so
      // that their state can still be reported without consuming anything.
      // A descriptor's own limit (Envoy's RateLimitOverride) replaces the rule's windows for this
      // request only; the key's state is the same, matched by period.
      items.add(new Item(l.rule().name(), keys[i], blocked ? 0 : hits,
          overrides[i] == null ? null : List.of(overrides[i])));
    }
    return new Plan(request, limits, itemOf, items, overrides);
  }

  /**
   * The window of a descriptor's {@code limit} (Envoy's {@code RateLimitOverride}), or null
   * without one. It applies to a descriptor that matches a limit of the domain with a rule, as
   * the rule's windows for this request; a descriptor that matches none, or an {@code unlimited}
   * or blocked one, is answered as without it.
   */
  private static Window override(RateLimitDescriptor desc, int i) {
    if (!desc.hasLimit()) {
      return null;
    }
    RateLimitDescriptor.RateLimitOverride o = desc.getLimit();
    EnvoyUnit unit = o.getUnit() == RateLimitUnit.UNRECOGNIZED || o.getUnit() == RateLimitUnit.UNKNOWN
        ? null : EnvoyUnit.fromConfigName(o.getUnit().name());
    if (unit == null) {
      throw new IllegalArgumentException("the limit of descriptor " + i + " has unit "
          + (o.getUnit() == RateLimitUnit.UNRECOGNIZED ? String.valueOf(o.getUnitValue()) : o.getUnit().name())
          + "; expected SECOND, MINUTE, HOUR, DAY, MONTH or YEAR");
    }
    long perUnit = Integer.toUnsignedLong(o.getRequestsPerUnit());
    if (perUnit == 0) {
      throw new IllegalArgumentException("the limit of descriptor " + i + " has requests_per_unit 0; "
          + "it must be at least 1");
    }
    return new Window(perUnit, unit.period());
  }

  /** The entries of a request descriptor, as the Envoy format's resolution reads them. */
  static List<EnvoyEntry> entries(RateLimitDescriptor desc) {
    List<EnvoyEntry> entries = new ArrayList<>(desc.getEntriesCount());
    for (RateLimitDescriptor.Entry e : desc.getEntriesList()) {
      entries.add(new EnvoyEntry(e.getKey(), e.getValue()));
    }
    return entries;
  }

  /**
   * The Sluice key of a request descriptor that matched no wildcard with {@code share_threshold}
   * ({@link EnvoyEntry#key}).
   */
  static String key(RateLimitDescriptor desc) {
    return EnvoyEntry.key(entries(desc));
  }

  private void respond(StreamObserver<RateLimitResponse> out, Plan plan, Decision d) {
    RateLimitResponse.Builder r = RateLimitResponse.newBuilder();
    int failed = 0;
    int quotas = 0;
    int quotasFailed = 0;
    List<EnvoyLimit> passed = new ArrayList<>(plan.limits.length);
    DescriptorStatus closest = null;
    for (int i = 0; i < plan.limits.length; i++) {
      EnvoyLimit l = plan.limits[i];
      DescriptorStatus s = status(plan, d, i);
      r.addStatuses(s);
      if (l != null && !l.unlimited() && l.quota()) {
        quotas++;
      }
      if (s.getCode() == Code.OVER_LIMIT) {
        if (l.quota()) {
          quotasFailed++;
        } else {
          failed++;
        }
      } else if (l == null || !l.unlimited()) {
        passed.add(l);
      }
      // The headers describe the descriptor closest to its limit; one over it (quota mode
      // aside) always wins, the last such.
      if (s.hasCurrentLimit() && (closest == null || Integer.compareUnsigned(s.getLimitRemaining(), closest.getLimitRemaining()) < 0
          || s.getCode() == Code.OVER_LIMIT && !l.quota())) {
        closest = s;
      }
    }
    // Quota-mode limits deny together: only when every one of the request's is over its limit.
    boolean over = failed > 0 || quotas > 0 && quotasFailed == quotas;
    r.setOverallCode(over && !options.shadowMode() ? Code.OVER_LIMIT : Code.OK);
    if (options.responseHeaders() && closest != null) {
      r.addResponseHeadersToAdd(header(LIMIT_HEADER, Integer.toUnsignedString(closest.getCurrentLimit()
          .getRequestsPerUnit())));
      r.addResponseHeadersToAdd(header(REMAINING_HEADER, Integer.toUnsignedString(closest.getLimitRemaining())));
      r.addResponseHeadersToAdd(header(RESET_HEADER, Long.toString(closest.getDurationUntilReset().getSeconds())));
    }
    if (options.dynamicMetadata()) {
      r.setDynamicMetadata(EnvoyDynamicMetadata.of(plan.request, passed));
    }
    out.onNext(r.build());
    out.onCompleted();
  }

  /**
   * The status of descriptor {@code i}, as Envoy's service words it: {@code limit_remaining} 0
   * when over the limit, {@code duration_until_reset} in whole seconds rounded up, and
   * {@code current_limit.name} only if the configuration names the limit.
   */
  private DescriptorStatus status(Plan plan, Decision d, int i) {
    EnvoyLimit l = plan.limits[i];
    DescriptorStatus.Builder s = DescriptorStatus.newBuilder().setCode(Code.OK);
    if (l == null) {
      return s.setLimitRemaining(0).build();
    }
    if (l.unlimited()) {
      return s.setLimitRemaining((int) UINT32_MAX).build();
    }
    String name = l.name() == null ? "" : l.name();
    if (l.blocked()) {
      s.setCurrentLimit(RateLimitResponse.RateLimit.newBuilder().setRequestsPerUnit(0).setUnit(proto(l.unit()))
          .setName(name));
      s.setLimitRemaining(0).setDurationUntilReset(seconds(untilPeriodEnds(l.unit().period().toMillis())));
      return s.setCode(l.shadow() ? Code.OK : Code.OVER_LIMIT).build();
    }
    ItemDecision it = d.items().get(plan.itemOf[i]);
    Window override = plan.overrides[i];
    WindowState w = override == null ? binding(it) : ofPeriod(it, override);
    RateLimitResponse.RateLimit.Builder cl = RateLimitResponse.RateLimit.newBuilder();
    if (override != null) {
      // The descriptor's own limit is the one in force for it; Envoy's service names it not.
      cl.setRequestsPerUnit((int) override.limit()).setUnit(proto(EnvoyUnit.ofPeriod(override.period())));
      s.setCurrentLimit(cl);
    } else if (w != null) {
      EnvoyUnit unit = EnvoyUnit.ofPeriod(java.time.Duration.ofMillis(w.periodMs()));
      cl.setRequestsPerUnit((int) Math.min(w.limit(), UINT32_MAX)).setName(name);
      if (unit != null) {
        cl.setUnit(proto(unit));
      }
      s.setCurrentLimit(cl);
    }
    if (w != null) {
      s.setLimitRemaining(it.allowed() ? (int) Math.min(Math.max(0, w.remaining()), UINT32_MAX) : 0);
      s.setDurationUntilReset(seconds(untilReset(l, w)));
    }
    if (!it.allowed() && !l.shadow()) {
      s.setCode(Code.OVER_LIMIT);
    }
    return s.build();
  }

  /**
   * Until the window resets. A fixed window with nothing counted yet (a first peek with
   * {@code hits_addend: 0}) still ends with its period, as Envoy reports it.
   */
  private long untilReset(EnvoyLimit l, WindowState w) {
    long ms = w.resetAfterMs();
    if (ms <= 0 && l.rule().algorithm() == Algorithm.FIXED_WINDOW) {
      ms = untilPeriodEnds(w.periodMs());
    }
    return ms;
  }

  /**
   * The window an Envoy status reports (it has room for one): a denying window (the one that
   * frees last), else the window with the least room left relative to its limit.
   */
  private static WindowState binding(ItemDecision it) {
    WindowState best = null;
    for (WindowState w : it.windows()) {
      if (best == null) {
        best = w;
      } else if (w.exceeded() != best.exceeded()) {
        best = w.exceeded() ? w : best;
      } else if (w.exceeded()) {
        best = Long.compareUnsigned(w.retryAfterMs(), best.retryAfterMs()) > 0 ? w : best;
      } else if ((double) w.remaining() / w.limit() < (double) best.remaining() / best.limit()) {
        best = w;
      }
    }
    return best;
  }

  /** The state of the item's window of {@code window}'s period, or null. */
  private static WindowState ofPeriod(ItemDecision it, Window window) {
    for (WindowState w : it.windows()) {
      if (w.periodMs() == window.periodMillis()) {
        return w;
      }
    }
    return null;
  }

  private long untilPeriodEnds(long periodMs) {
    return periodMs - Math.floorMod(clock.millis(), periodMs);
  }

  /**
   * Whole seconds, rounded up as Envoy's service counts them: 41 for 40.052 s; a fixed window's
   * last second is 1 and its first is the whole period.
   */
  private static Duration seconds(long ms) {
    return Duration.newBuilder().setSeconds(Math.floorDiv(Math.max(0, ms) + 999, 1000)).build();
  }

  private static RateLimitResponse.RateLimit.Unit proto(EnvoyUnit unit) {
    return RateLimitResponse.RateLimit.Unit.valueOf(unit.name());
  }

  private static HeaderValue header(String key, String value) {
    return HeaderValue.newBuilder().setKey(key).setValue(value).build();
  }
}
