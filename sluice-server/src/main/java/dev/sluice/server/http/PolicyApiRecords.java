package dev.sluice.server.http;

import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.QueryParams;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.sluice.policy.Offender;
import dev.sluice.policy.Policies;
import dev.sluice.RuleSet;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/** What was recorded about keys: {@code /v1/audit/{rule}/{key}} and {@code /v1/top}. */
final class PolicyApiRecords extends PolicyApiHandler {
  /** Offenders {@code /v1/top} returns when {@code count} is not given. */
  static final int DEFAULT_TOP = 10;
  /** Minutes {@code /v1/top} covers when {@code minutes} is not given, and the most it covers. */
  static final int DEFAULT_MINUTES = 5;
  static final int MAX_MINUTES = 60;
  private static final Set<String> TOP_PARAMS = Set.of("rule", "minutes", "count");

  PolicyApiRecords(Supplier<Policies> policies, Supplier<RuleSet> rules, Clock clock,
      Function<Throwable, HttpResponse> otherFailure) {
    super(policies, rules, clock, otherFailure);
  }

  HttpResponse audit(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    List<String> p = segments(ctx, "/v1/audit/", 2, "/v1/audit/{rule}/{key}");
    String rule = rule(p.get(0));
    String key = key(p.get(1));
    noBody(req);
    return answer(policies().audit(rule, key), values -> ok(g -> {
      g.writeStartObject();
      g.writeStringField("rule", rule);
      g.writeStringField("key", key);
      g.writeArrayFieldStart("values");
      for (String v : values) {
        g.writeString(v);
      }
      g.writeEndArray();
      g.writeEndObject();
    }), "invalid_request");
  }

  HttpResponse top(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    noBody(req);
    QueryParams q = query(ctx, TOP_PARAMS);
    if (q.get("rule") == null) {
      throw ApiException.badRequest("invalid_request", "'rule' is required: /v1/top?rule=<rule>&minutes=5&count=10");
    }
    String rule = rule(q.get("rule"));
    int minutes = intParam(q, "minutes", DEFAULT_MINUTES, 1, MAX_MINUTES, "invalid_request");
    int count = count(q, DEFAULT_TOP);
    return answer(policies().top(rule, Duration.ofMinutes(minutes), count), top -> ok(g -> {
      g.writeStartObject();
      g.writeStringField("rule", rule);
      g.writeNumberField("minutes", minutes);
      g.writeArrayFieldStart("items");
      for (Offender o : top) {
        g.writeStartObject();
        g.writeStringField("key", o.key());
        g.writeNumberField("denials", o.denials());
        g.writeNumberField("error", o.error());
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
    }), "invalid_page");
  }
}
