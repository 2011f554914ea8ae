package dev.sluice.server.http;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.QueryParams;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.sluice.policy.Ban;
import dev.sluice.policy.Policies;
import dev.sluice.RuleSet;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/** Bans: {@code /v1/bans} and {@code /v1/bans/{rule}/{key}}. */
final class PolicyApiBans extends PolicyApiHandler {
  /** The latest expiry a manual ban may have, from now: ten years is "until lifted". */
  static final Duration MAX_BAN = Duration.ofDays(3650);

  private static final Set<String> BAN_FIELDS = Set.of("until", "for");
  private static final Set<String> PAGE_PARAMS = Set.of("rule", "after", "count");

  PolicyApiBans(Supplier<Policies> policies, Supplier<RuleSet> rules, Clock clock,
      Function<Throwable, HttpResponse> otherFailure) {
    super(policies, rules, clock, otherFailure);
  }

  HttpResponse ban(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    List<String> p = segments(ctx, "/v1/bans/", 2, "/v1/bans/{rule}/{key}");
    String rule = rule(p.get(0));
    String key = key(p.get(1));
    HttpMethod m = req.method();
    if (m == HttpMethod.GET) {
      noBody(req);
      return answer(policies().ban(rule, key), b -> b.isPresent() ? ok(g -> writeBan(g, b.get()))
          : notFound("key '" + clip(key) + "' is not banned under rule '" + rule + "'"), "invalid_expiry");
    }
    if (m == HttpMethod.DELETE) {
      noBody(req);
      return answer(policies().unban(rule, key), lifted -> {
        if (lifted) {
          LOG.info("ban of one key under rule '{}' lifted", rule);
        }
        return lifted ? noContent() : notFound("key '" + clip(key) + "' is not banned under rule '" + rule + "'");
      }, "invalid_expiry");
    }
    Instant until = banUntil(RequestJson.object(req.content().array()));
    return answer(policies().ban(rule, key, until), v -> {
      LOG.info("one key banned under rule '{}' until {}", rule, until);
      return ok(g -> writeBan(g, new Ban(rule, key, until.toEpochMilli(), false)));
    }, "invalid_expiry");
  }

  HttpResponse listBans(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    noBody(req);
    QueryParams q = query(ctx, PAGE_PARAMS);
    String rule = q.get("rule") == null ? null : rule(q.get("rule"));
    String after = after(q);
    int count = count(q, DEFAULT_PAGE);
    return answer(policies().bans(rule, after, count), page -> ok(g -> writePage(g, page, PolicyApiBans::writeBan)),
        "invalid_page");
  }

  /** {@code {"until": "2026-01-01T00:00:00Z"}} or {@code {"for": "15m"}}: when the ban ends, after now. */
  private Instant banUntil(JsonNode body) throws ApiException {
    onlyFields(body, "", BAN_FIELDS, "invalid_expiry");
    JsonNode until = body.get("until");
    JsonNode lasts = body.get("for");
    if ((until == null) == (lasts == null)) {
      throw ApiException.badRequest("invalid_expiry", "a ban gives 'until' (a time) or 'for' (a duration), "
          + "exactly one of them");
    }
    Instant now = clock.instant();
    Instant end;
    if (until != null) {
      if (!until.isTextual()) {
        throw ApiException.badRequest("invalid_expiry", "'until' must be a time such as 2030-01-01T00:00:00Z, was "
            + RequestJson.typeName(until));
      }
      try {
        end = OffsetDateTime.parse(until.textValue()).toInstant();
      } catch (DateTimeParseException e) {
        throw ApiException.badRequest("invalid_expiry", "'until' must be a time such as 2030-01-01T00:00:00Z "
            + "(with its offset), was '" + clip(until.textValue()) + "'");
      }
      if (!end.isAfter(now)) {
        throw ApiException.badRequest("invalid_expiry", "'until' " + until.textValue() + " is in the past (now is "
            + now + ")");
      }
      if (end.isAfter(now.plus(MAX_BAN))) {
        throw ApiException.badRequest("invalid_expiry", "'until' is more than 3650 days ahead");
      }
    } else {
      if (!lasts.isTextual()) {
        throw ApiException.badRequest("invalid_expiry", "'for' must be a duration string such as 15m, was "
            + RequestJson.typeName(lasts));
      }
      Duration d = duration(lasts.textValue(), "for", "invalid_expiry");
      if (d.toMillis() < 1) {
        throw ApiException.badRequest("invalid_expiry", "'for' must be at least 1ms, was '"
            + clip(lasts.textValue()) + "'");
      }
      if (d.compareTo(MAX_BAN) > 0) {
        throw ApiException.badRequest("invalid_expiry", "'for' must be at most 3650d, was '"
            + clip(lasts.textValue()) + "'");
      }
      end = now.plus(d);
    }
    // The store keeps milliseconds.
    return Instant.ofEpochMilli(end.toEpochMilli());
  }

  private static void writeBan(JsonGenerator g, Ban b) throws IOException {
    g.writeStartObject();
    g.writeStringField("rule", b.rule());
    g.writeStringField("key", b.key());
    g.writeStringField("until", Instant.ofEpochMilli(b.untilMillis()).toString());
    g.writeBooleanField("automatic", b.automatic());
    g.writeEndObject();
  }
}
