package dev.sluice.spring.actuate;

import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.Window;
import dev.sluice.policy.Ban;
import dev.sluice.policy.KeyLimit;
import dev.sluice.policy.ListKind;
import dev.sluice.policy.Page;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code sluice} actuator endpoint, read-only: the rules and operations in force, and for
 * each rule its live limits, bans and the entries added to its allow and deny lists at run time,
 * as the store holds them. Bounded: the first
 * {@link #MAX_RULES} rules' policies are read, {@link #PAGE} entries of each kind per rule, within
 * {@link #BUDGET_MILLIS} in all (a slow store must not hold an actuator thread for minutes); what
 * was not read in time says so.
 */
@Endpoint(id = "sluice")
public final class SluiceEndpoint {
  static final int MAX_RULES = 100;
  static final int PAGE = 100;
  static final long BUDGET_MILLIS = 5_000;

  private final RateLimiter limiter;

  public SluiceEndpoint(RateLimiter limiter) {
    this.limiter = limiter;
  }

  @ReadOperation
  public Map<String, Object> sluice() {
    Map<String, Object> out = new LinkedHashMap<>();
    List<Map<String, Object>> rules = new ArrayList<>();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BUDGET_MILLIS);
    int read = 0;
    for (Rule r : limiter.rules().rules()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", r.name());
      m.put("algorithm", r.algorithm().configName());
      m.put("failureMode", r.failureMode().configName());
      m.put("shadow", r.shadow());
      m.put("windows", windows(r.windows()));
      if (read++ < MAX_RULES) {
        m.put("liveLimits", liveLimits(r.name(), deadline));
        m.put("bans", bans(r.name(), deadline));
        m.put("allowList", entries(ListKind.ALLOW, r.name(), deadline));
        m.put("denyList", entries(ListKind.DENY, r.name(), deadline));
      }
      rules.add(m);
    }
    out.put("rules", rules);
    List<Map<String, Object>> operations = new ArrayList<>();
    for (Operation op : limiter.rules().operations()) {
      List<Map<String, Object>> items = new ArrayList<>();
      for (OperationItem it : op.items()) {
        Map<String, Object> i = new LinkedHashMap<>();
        i.put("rule", it.rule());
        i.put("key", it.key());
        if (it.when() != null) {
          i.put("when", it.when());
        }
        if (it.unless() != null) {
          i.put("unless", it.unless());
        }
        i.put("cost", it.cost());
        items.add(i);
      }
      operations.add(Map.of("name", op.name(), "items", items));
    }
    out.put("operations", operations);
    return out;
  }

  private static List<Map<String, Object>> windows(List<Window> ws) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Window w : ws) {
      out.add(Map.of("limit", w.limit(), "period", w.periodText()));
    }
    return out;
  }

  private static long left(long deadline) {
    return Math.max(0, deadline - System.nanoTime());
  }

  private Object liveLimits(String rule, long deadline) {
    try {
      Page<KeyLimit> page = limiter.policies().limits(rule, null, PAGE).toCompletableFuture()
          .get(left(deadline), TimeUnit.NANOSECONDS);
      List<Map<String, Object>> out = new ArrayList<>();
      for (KeyLimit k : page.items()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("key", k.key());
        if (k.limit().tier() != null) {
          m.put("tier", k.limit().tier());
        }
        if (k.limit().windows() != null && !k.limit().windows().isEmpty()) {
          m.put("windows", windows(k.limit().windows()));
        }
        out.add(m);
      }
      return out;
    } catch (Exception e) {
      return unavailable(e);
    }
  }

  private Object bans(String rule, long deadline) {
    try {
      Page<Ban> page = limiter.policies().bans(rule, null, PAGE).toCompletableFuture()
          .get(left(deadline), TimeUnit.NANOSECONDS);
      List<Map<String, Object>> out = new ArrayList<>();
      for (Ban b : page.items()) {
        out.add(Map.of("key", b.key(), "until", Instant.ofEpochMilli(b.untilMillis()).toString(),
            "automatic", b.automatic()));
      }
      return out;
    } catch (Exception e) {
      return unavailable(e);
    }
  }

  /** The entries added to a list of {@code rule} at run time (the configured ones are in its files). */
  private Object entries(ListKind kind, String rule, long deadline) {
    try {
      return limiter.policies().list(kind, rule, null, PAGE).toCompletableFuture()
          .get(left(deadline), TimeUnit.NANOSECONDS).items();
    } catch (Exception e) {
      return unavailable(e);
    }
  }

  private static String unavailable(Exception e) {
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    return "unavailable (" + e.getClass().getSimpleName() + ")";
  }
}
