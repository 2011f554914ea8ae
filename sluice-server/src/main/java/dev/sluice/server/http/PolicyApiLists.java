package dev.sluice.server.http;

import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.QueryParams;
import com.linecorp.armeria.server.ServiceRequestContext;
import dev.sluice.policy.ListKind;
import dev.sluice.policy.Policies;
import dev.sluice.RuleSet;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The run-time entries of the allow and deny lists: {@code /v1/lists/{allow|deny}/{rule}[/{entry}]},
 * and {@code GET /v1/lists/{allow|deny}}, every rule's entries of that kind.
 */
final class PolicyApiLists extends PolicyApiHandler {
  private static final Set<String> LIST_PAGE_PARAMS = Set.of("after", "count");

  PolicyApiLists(Supplier<Policies> policies, Supplier<RuleSet> rules, Clock clock,
      Function<Throwable, HttpResponse> otherFailure) {
    super(policies, rules, clock, otherFailure);
  }

  HttpResponse list(ServiceRequestContext ctx, AggregatedHttpRequest req) throws ApiException {
    HttpMethod m = req.method();
    boolean listing = m == HttpMethod.GET;
    boolean everyRule = listing && PathSegments.count(ctx, "/v1/lists/") == 1;
    List<String> p = everyRule ? segments(ctx, "/v1/lists/", 1, "/v1/lists/{allow|deny}")
        : listing ? segments(ctx, "/v1/lists/", 2, "/v1/lists/{allow|deny}/{rule}")
        : segments(ctx, "/v1/lists/", 3, "/v1/lists/{allow|deny}/{rule}/{entry}");
    ListKind kind = switch (p.get(0)) {
      case "allow" -> ListKind.ALLOW;
      case "deny" -> ListKind.DENY;
      default -> throw new ApiException(404, "not_found", "no list '" + clip(p.get(0))
          + "': the lists are /v1/lists/allow and /v1/lists/deny");
    };
    String rule = everyRule ? null : rule(p.get(1));
    noBody(req);
    if (listing) {
      QueryParams q = query(ctx, LIST_PAGE_PARAMS);
      String after = after(q);
      int count = count(q, DEFAULT_PAGE);
      if (everyRule) {
        return answer(policies().lists(kind, after, count), page -> ok(g -> writePage(g, page, (w, e) -> {
          w.writeStartObject();
          w.writeStringField("rule", e.rule());
          w.writeStringField("entry", e.entry());
          w.writeEndObject();
        })), "invalid_page");
      }
      return answer(policies().list(kind, rule, after, count), page -> ok(g -> writePage(g, page,
          (w, e) -> w.writeString(e))), "invalid_page");
    }
    String entry = p.get(2);
    if (entry.isEmpty()) {
      throw ApiException.badRequest("invalid_entry", "the list entry is empty");
    }
    if (m == HttpMethod.DELETE) {
      return answer(policies().removeFromList(kind, rule, entry), removed -> {
        if (removed) {
          LOG.info("an entry of the {} list of rule '{}' removed", kind.wireName(), rule);
        }
        return removed ? noContent() : notFound("the " + kind.wireName() + " list of rule '" + rule
            + "' has no run-time entry '" + clip(entry) + "'");
      }, "invalid_entry");
    }
    return answer(policies().addToList(kind, rule, entry), v -> {
      LOG.info("an entry added to the {} list of rule '{}'", kind.wireName(), rule);
      return ok(g -> {
        g.writeStartObject();
        g.writeStringField("list", kind.wireName());
        g.writeStringField("rule", rule);
        g.writeStringField("entry", entry);
        g.writeEndObject();
      });
    }, "invalid_entry");
  }
}
