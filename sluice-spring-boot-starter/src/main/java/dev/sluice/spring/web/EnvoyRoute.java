package dev.sluice.spring.web;

import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.Item;
import dev.sluice.ItemDecision;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.UnknownRuleException;
import dev.sluice.WindowState;
import dev.sluice.config.envoy.EnvoyDomain;
import dev.sluice.config.envoy.EnvoyEntry;
import dev.sluice.config.envoy.EnvoyLimit;
import dev.sluice.config.envoy.EnvoyMatch;
import dev.sluice.config.envoy.EnvoyResolution;
import dev.sluice.spring.SluiceConfigurationException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * A route decided through an Envoy domain, as Envoy's rate limit filter would ask the service:
 * each configured descriptor becomes the request's entries, in order, their values read from the
 * request by the route's attribute sources, and the domain resolves them as the service does
 * ({@link EnvoyDomain#resolve}): every matched limit decided in one transaction, {@code replaces}
 * applied, {@code unlimited} never counted, {@code requests_per_unit: 0} denying the request,
 * {@code shadow_mode} reported only, and {@code quota_mode} limits denying only when all of the
 * request's are over their limit. As Envoy leaves out a descriptor when an action finds no value
 * (a header not sent), a descriptor with an entry the request lacks is left out.
 */
final class EnvoyRoute {
  /** One configured descriptor: its entries' keys and sources, in order. */
  record Descriptor(List<String> keys, List<AttributeSource> sources) {}

  private final String domain;
  private final List<Descriptor> descriptors;
  private final Supplier<Map<String, EnvoyDomain>> domains;
  private final long cost;

  private EnvoyRoute(String domain, List<Descriptor> descriptors, Supplier<Map<String, EnvoyDomain>> domains,
      long cost) {
    this.domain = domain;
    this.descriptors = List.copyOf(descriptors);
    this.domains = domains;
    this.cost = cost;
  }

  /**
   * Checks and compiles a route's {@code descriptors}.
   *
   * @throws SluiceConfigurationException naming the descriptor or entry at fault
   */
  static EnvoyRoute of(String where, String domain, List<Map<String, String>> given,
      Supplier<Map<String, EnvoyDomain>> domains, long cost) {
    if (given.isEmpty()) {
      throw new SluiceConfigurationException(where + ".domain is '" + domain + "' but " + where
          + ".descriptors is empty: no request would be limited", "List the descriptors each request sends to "
          + "the domain, e.g. - {remote_address: client-ip}.");
    }
    List<Descriptor> out = new ArrayList<>();
    for (int i = 0; i < given.size(); i++) {
      Map<String, String> d = given.get(i);
      String at = where + ".descriptors[" + i + "]";
      if (d == null || d.isEmpty()) {
        throw new SluiceConfigurationException(at + " has no entries", "Give each descriptor at least one entry: "
            + "its key and where its value comes from, e.g. {remote_address: client-ip}.");
      }
      List<String> keys = new ArrayList<>();
      List<AttributeSource> sources = new ArrayList<>();
      for (Map.Entry<String, String> e : d.entrySet()) {
        keys.add(e.getKey());
        sources.add(AttributeSource.parse(e.getValue(), at + "." + e.getKey()));
      }
      out.add(new Descriptor(List.copyOf(keys), List.copyOf(sources)));
    }
    return new EnvoyRoute(domain.trim(), out, domains, cost);
  }

  String domain() {
    return domain;
  }

  List<Descriptor> descriptors() {
    return descriptors;
  }

  /** Per descriptor, its entry keys; for {@code Requirements.envoy}. */
  List<List<String>> keys() {
    return descriptors.stream().map(Descriptor::keys).toList();
  }

  /** Per descriptor, each entry's constant value, or null where each request brings its own. */
  List<List<String>> constants() {
    List<List<String>> all = new ArrayList<>();
    for (Descriptor d : descriptors) {
      all.add(Arrays.asList(d.sources().stream()
          .map(s -> s.kind() == AttributeSource.Kind.VALUE ? s.argument() : null).toArray(String[]::new)));
    }
    return all;
  }

  /** The call for one request whose attribute sources read {@code values}. */
  RouteCall call(List<List<String>> values) {
    List<List<EnvoyEntry>> sent = new ArrayList<>();
    for (int i = 0; i < descriptors.size(); i++) {
      List<String> keys = descriptors.get(i).keys();
      List<String> vs = values.get(i);
      List<EnvoyEntry> entries = new ArrayList<>(keys.size());
      for (int j = 0; j < keys.size() && vs.get(j) != null; j++) {
        entries.add(new EnvoyEntry(keys.get(j), vs.get(j)));
      }
      if (entries.size() == keys.size()) {
        sent.add(entries);
      }
    }
    return new Call(sent);
  }

  /** What the request's descriptors matched, and the items they became. */
  private record Plan(List<Item> items, List<EnvoyLimit> limits, List<EnvoyMatch> blocked) {}

  private final class Call implements RouteCall {
    private final List<List<EnvoyEntry>> sent;

    Call(List<List<EnvoyEntry>> sent) {
      this.sent = sent;
    }

    @Override
    public Decision decide(RateLimiter limiter) {
      Plan p = plan();
      try {
        return finish(p, p.items.isEmpty() ? null : limiter.acquire(Request.of(p.items)));
      } catch (UnknownRuleException e) {
        // A reload removed a rule between resolving and deciding: resolve again on the new domains.
        Plan again = plan();
        return finish(again, again.items.isEmpty() ? null : limiter.acquire(Request.of(again.items)));
      }
    }

    @Override
    public CompletionStage<Decision> decideAsync(RateLimiter limiter) {
      Plan p = plan();
      if (p.items.isEmpty()) {
        return CompletableFuture.completedFuture(finish(p, null));
      }
      return limiter.acquireAsync(Request.of(p.items)).handle((d, err) -> {
        if (err == null) {
          return CompletableFuture.completedFuture(finish(p, d));
        }
        Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
        if (cause instanceof UnknownRuleException) {
          Plan again = plan();
          return again.items.isEmpty() ? CompletableFuture.completedFuture(finish(again, null))
              : limiter.acquireAsync(Request.of(again.items)).thenApply(d2 -> finish(again, d2));
        }
        return CompletableFuture.<Decision>failedFuture(cause);
      }).thenCompose(s -> s);
    }

    private Plan plan() {
      EnvoyDomain d = domains.get().get(domain);
      if (d == null || sent.isEmpty()) {
        return new Plan(List.of(), List.of(), List.of());
      }
      EnvoyResolution r = d.resolve(sent);
      List<Item> items = new ArrayList<>();
      List<EnvoyLimit> limits = new ArrayList<>();
      List<EnvoyMatch> blocked = new ArrayList<>();
      for (EnvoyMatch m : r.matches()) {
        if (m == null) {
          continue;
        }
        EnvoyLimit l = m.limit();
        if (l.rule() != null) {
          // A blocked request only looks at the other limits (cost 0), so that the answer can still
          // report their state without consuming anything, as the service does.
          items.add(new Item(l.rule().name(), m.key(), r.blocked() ? 0 : cost));
          limits.add(l);
        } else if (l.blocked() && !l.shadow() && !l.quota()) {
          blocked.add(m);
        }
      }
      return new Plan(items, limits, blocked);
    }
  }

  /**
   * The decision as Envoy's service would answer it: a blocked limit denies, and quota-mode
   * limits (shadow rules) deny together when every one of them is over its limit. Null when no
   * limit applied: the request goes through as if no route matched.
   */
  private static Decision finish(Plan p, Decision d) {
    if (d == null && p.blocked.isEmpty()) {
      return null;
    }
    List<ItemDecision> items = new ArrayList<>(d == null ? List.of() : d.items());
    boolean degraded = d != null && d.degraded();
    int quotas = 0;
    int quotasOver = 0;
    for (int i = 0; i < p.limits.size(); i++) {
      if (p.limits.get(i).quota()) {
        quotas++;
        quotasOver += items.get(i).allowed() ? 0 : 1;
      }
    }
    boolean changed = !p.blocked.isEmpty();
    if (quotas > 0 && quotasOver == quotas) {
      for (int i = 0; i < p.limits.size(); i++) {
        if (p.limits.get(i).quota()) {
          ItemDecision it = items.get(i);
          items.set(i, new ItemDecision(it.rule(), it.key(), it.cost(), false, it.reason(), it.waitMs(), it.windows(),
              false, it.blockedMs(), it.leased()));
        }
      }
      changed = true;
    }
    for (EnvoyMatch m : p.blocked) {
      // requests_per_unit: 0 admits nothing, ever: a cost that can never fit.
      long periodMs = m.limit().unit().period().toMillis();
      items.add(new ItemDecision(m.limit().ruleName(), m.key(), 1, false, DenyReason.COST_EXCEEDS_LIMIT, 0,
          List.of(new WindowState(0, periodMs, 0, WindowState.NEVER, 0, true)), false));
    }
    return changed ? Decision.of(items, degraded) : d;
  }
}
