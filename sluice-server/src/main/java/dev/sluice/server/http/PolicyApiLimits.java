package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.QueryParams;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.sluice.policy.LiveLimit;
import dev.sluice.policy.Policies;
import dev.sluice.RuleSet;
import dev.sluice.Window;
import java.io.IOException;
import java.math.BigInteger;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/** The live limits of keys: {@code /v1/limits} and {@code /v1/limits/{rule}/{key}}. */
final class PolicyApiLimits extends PolicyApiHandler {
  private static final Set<String> LIMIT_FIELDS = Set.of("tier", "windows");
  private static final Set<String> WINDOW_FIELDS = Set.of("limit", "period");
  private static final Set<String> PAGE_PARAMS = Set.of("rule", "after", "count");

  PolicyApiLimits(Supplier<Policies> policies, Supplier<RuleSet> rules, Clock clock,
      Function<Throwable, HttpResponse> otherFailure) {
    super(policies, rules, clock, otherFailure);
  }

  HttpResponse limit(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    List<String> p = segments(ctx, "/v1/limits/", 2, "/v1/limits/{rule}/{key}");
    String rule = rule(p.get(0));
    String key = key(p.get(1));
    HttpMethod m = req.method();
    if (m == HttpMethod.GET) {
      noBody(req);
      return answer(policies().limit(rule, key), l -> l.isPresent()
          ? ok(g -> writeLimit(g, rule, key, l.get()))
          : notFound("key '" + clip(key) + "' has no live limit under rule '" + rule + "'"), "invalid_limit");
    }
    if (m == HttpMethod.DELETE) {
      noBody(req);
      return answer(policies().removeLimit(rule, key), removed -> {
        if (removed) {
          LOG.info("live limit of rule '{}' removed for one key", rule);
        }
        return removed ? noContent()
            : notFound("key '" + clip(key) + "' has no live limit under rule '" + rule + "'");
      }, "invalid_limit");
    }
    LiveLimit limit = liveLimit(RequestJson.object(req.content().array()));
    return answer(policies().setLimit(rule, key, limit), v -> {
      LOG.info("live limit of rule '{}' set for one key", rule);
      return ok(g -> writeLimit(g, rule, key, limit));
    }, "invalid_limit");
  }

  HttpResponse listLimits(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    noBody(req);
    QueryParams q = query(ctx, PAGE_PARAMS);
    String rule = q.get("rule") == null ? null : rule(q.get("rule"));
    String after = after(q);
    int count = count(q, DEFAULT_PAGE);
    return answer(policies().limits(rule, after, count),
        page -> ok(g -> writePage(g, page, (w, l) -> writeLimit(w, l.rule(), l.key(), l.limit()))), "invalid_page");
  }

  /** {@code {"tier": "name"}} or {@code {"windows": [{"limit": 10, "period": "1m"}, ...]}}. */
  private LiveLimit liveLimit(JsonNode body) throws ApiException {
    onlyFields(body, "", LIMIT_FIELDS, "invalid_limit");
    JsonNode tier = body.get("tier");
    JsonNode windows = body.get("windows");
    if ((tier == null) == (windows == null)) {
      throw ApiException.badRequest("invalid_limit",
          "a live limit names a 'tier' or gives 'windows', exactly one of them");
    }
    if (tier != null) {
      if (!tier.isTextual()) {
        throw ApiException.badRequest("invalid_limit", "'tier' must be a string, was " + RequestJson.typeName(tier));
      }
      String name = tier.textValue();
      if (rules.get().tier(name) == null) {
        throw ApiException.badRequest("unknown_tier", "unknown tier '" + clip(name) + "'; tiers in force: "
            + names(rules.get().tiers().keySet()));
      }
      return LiveLimit.tier(name);
    }
    if (!windows.isArray()) {
      throw ApiException.badRequest("invalid_limit", "'windows' must be an array, was "
          + RequestJson.typeName(windows));
    }
    if (windows.isEmpty() || windows.size() > LiveLimit.MAX_WINDOWS) {
      throw ApiException.badRequest("invalid_limit", "'windows' must hold 1 to " + LiveLimit.MAX_WINDOWS
          + " windows, held " + windows.size());
    }
    List<Window> ws = new ArrayList<>();
    Set<Duration> periods = new HashSet<>();
    for (int i = 0; i < windows.size(); i++) {
      String at = "windows[" + i + "]";
      JsonNode w = windows.get(i);
      if (!w.isObject()) {
        throw ApiException.badRequest("invalid_limit", "'" + at + "' must be an object, was "
            + RequestJson.typeName(w));
      }
      onlyFields(w, at + ".", WINDOW_FIELDS, "invalid_limit");
      long limit = windowLimit(w.get("limit"), at + ".limit");
      Duration period = windowPeriod(w.get("period"), at + ".period");
      if (!periods.add(period)) {
        throw ApiException.badRequest("invalid_limit", "'" + at + ".period' repeats the period of an earlier "
            + "window; each window has its own period");
      }
      ws.add(new Window(limit, period));
    }
    return LiveLimit.windows(ws);
  }

  private static long windowLimit(JsonNode n, String field) throws ApiException {
    if (n == null || n.isNull()) {
      throw ApiException.badRequest("invalid_limit", "'" + field + "' is required");
    }
    if (!n.isIntegralNumber()) {
      throw ApiException.badRequest("invalid_limit", "'" + field + "' must be an integer >= 1, was "
          + RequestJson.typeName(n));
    }
    BigInteger v = n.bigIntegerValue();
    if (v.signum() <= 0 || v.bitLength() > 63) {
      throw ApiException.badRequest("invalid_limit", "'" + field + "' must be between 1 and " + Long.MAX_VALUE
          + ", was " + clip(v.toString()));
    }
    return v.longValue();
  }

  private static Duration windowPeriod(JsonNode n, String field) throws ApiException {
    if (n == null || n.isNull()) {
      throw ApiException.badRequest("invalid_limit", "'" + field + "' is required");
    }
    if (!n.isTextual()) {
      throw ApiException.badRequest("invalid_limit", "'" + field + "' must be a duration string such as 1m, was "
          + RequestJson.typeName(n));
    }
    Duration d = duration(n.textValue(), field, "invalid_limit");
    if (d.toNanos() % 1000 != 0) {
      throw ApiException.badRequest("invalid_limit", "'" + field + "' must be a whole number of microseconds");
    }
    return d;
  }

  /** A live limit as a PUT body gives it, with its rule and key. */
  private static void writeLimit(JsonGenerator g, String rule, String key, LiveLimit l) throws IOException {
    g.writeStartObject();
    g.writeStringField("rule", rule);
    g.writeStringField("key", key);
    if (l.tier() != null) {
      g.writeStringField("tier", l.tier());
    } else {
      g.writeArrayFieldStart("windows");
      for (Window w : l.windows()) {
        g.writeStartObject();
        g.writeNumberField("limit", w.limit());
        g.writeStringField("period", w.periodText());
        g.writeEndObject();
      }
      g.writeEndArray();
    }
    g.writeEndObject();
  }
}
