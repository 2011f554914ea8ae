package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonGenerator;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.QueryParams;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.policy.Policies;
import dev.sluice.spi.LeaseBoard;
import java.io.IOException;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * A leased rule as the lease board shows it across instances: {@code GET /v1/leases?rule=R} (its
 * keys, summed over the instances) and {@code GET /v1/leases?rule=R&key=K} (each instance that
 * reported the key). Read-only: it reads the reports and the leader, and writes nothing to the
 * board, so looking neither elects a leader nor counts as an instance.
 */
final class PolicyApiLeases extends PolicyApiHandler {
  private static final Set<String> PARAMS = Set.of("rule", "key");

  private final Supplier<Optional<LeaseBoard>> board;

  PolicyApiLeases(Supplier<Policies> policies, Supplier<RuleSet> rules, Supplier<Optional<LeaseBoard>> board,
      Clock clock, Function<Throwable, HttpResponse> otherFailure) {
    super(policies, rules, clock, otherFailure);
    this.board = board;
  }

  HttpResponse leases(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    noBody(req);
    QueryParams q = query(ctx, PARAMS);
    String name = q.get("rule");
    if (name == null) {
      throw ApiException.badRequest("invalid_request", "'rule' is required: GET /v1/leases?rule=<rule>[&key=<key>]");
    }
    Rule rule = rules.get().get(rule(name));
    if (rule.lease() == null) {
      throw ApiException.badRequest("not_leased", "rule '" + name + "' is not leased (mode: exact): its keys "
          + "are decided by the store alone and none is on the lease board");
    }
    String key = q.get("key") == null ? null : key(q.get("key"));
    LeaseBoard b = board.get().orElseThrow(() -> new ApiException(501, "unsupported",
        "this service's store keeps no lease board; leased rules need the memory or the Redis store"));
    RuleSet inForce = rules.get();
    Policies p = policiesOrNull();
    return answer(b.reports(LeaseBoardView.MAX_READ_BYTES).thenCombine(b.leader(), (reports, leader) -> {
      LeaseBoardView.View v = key == null ? LeaseBoardView.ofRule(name, reports)
          : LeaseBoardView.ofKey(name, key, reports);
      List<String> keys = key != null ? List.of(key) : v.rows().stream().map(LeaseBoardView.Row::name).toList();
      return LeaseBudgets.of(p, inForce, rule, keys).thenApply(budgets -> ok(g -> write(g, rule, key, leader, v,
          budgets)));
    }).thenCompose(f -> f), r -> r, "invalid_request");
  }

  private static void write(JsonGenerator g, Rule rule, String key, LeaseBoard.Leader leader, LeaseBoardView.View v,
      ToLongFunction<String> budgets) throws IOException {
    g.writeStartObject();
    g.writeStringField("rule", rule.name());
    if (key != null) {
      g.writeStringField("key", key);
      g.writeNumberField("budget", budgets.applyAsLong(key));
    }
    if (leader.instance() == null) {
      g.writeNullField("leader");
    } else {
      g.writeObjectFieldStart("leader");
      g.writeStringField("instance", leader.instance());
      g.writeNumberField("token", leader.token());
      g.writeNumberField("termLeftMs", Math.max(0, leader.untilMillis() - leader.nowMillis()));
      g.writeEndObject();
    }
    g.writeArrayFieldStart(key != null ? "instances" : "keys");
    for (LeaseBoardView.Row r : v.rows()) {
      g.writeStartObject();
      if (key != null) {
        g.writeStringField("instance", r.name());
      } else {
        g.writeStringField("key", r.name());
        g.writeNumberField("instances", r.instances());
      }
      counts(g, r);
      if (key != null) {
        g.writeNumberField("intervalMs", r.intervalMs());
      } else {
        g.writeNumberField("budget", budgets.applyAsLong(r.name()));
      }
      g.writeEndObject();
    }
    g.writeEndArray();
    g.writeObjectFieldStart("total");
    g.writeNumberField(key != null ? "instances" : "keys", v.total().instances());
    counts(g, v.total());
    g.writeEndObject();
    g.writeBooleanField("truncated", v.truncated());
    g.writeNumberField("reports", v.reports());
    g.writeNumberField("unreadable", v.unreadable());
    g.writeBooleanField("partial", v.partial());
    g.writeEndObject();
  }

  private static void counts(JsonGenerator g, LeaseBoardView.Row r) throws IOException {
    g.writeNumberField("admitted", r.admitted());
    g.writeNumberField("sentToStore", r.sent());
    g.writeNumberField("sizeInUse", r.sizeInUse());
    g.writeNumberField("held", r.held());
  }
}
