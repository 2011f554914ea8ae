package dev.sluice.server.cli;

import dev.sluice.Decision;
import dev.sluice.InvalidKeyException;
import dev.sluice.Item;
import dev.sluice.ItemDecision;
import dev.sluice.OperationRequest;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.StoreException;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.DecisionJson;
import java.io.PrintWriter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Decides a trace's requests on the trace's own clock and writes one JSON line per request, then
 * a summary. Nothing sleeps: each request is decided at its {@code t}.
 */
final class Replayer implements TraceSink {
  /** How often (in requests) to sweep idle keys of the memory store on the trace clock. */
  private static final int SWEEP_EVERY = 1 << 16;

  private final RateLimiter limiter;
  private final MemoryStore memory;
  private final ReplayClock clock;
  private final PrintWriter out;
  private final boolean summaryOnly;
  private final RuleSet rules;
  private final String traceName;
  private final StringBuilder line = new StringBuilder(512);
  private final Map<String, long[]> perRule = new HashMap<>();

  /** What {@code --report} gathers, or null; and the {@code --compare} side with its limiter. */
  private ReplayReport.Side reported;
  private RateLimiter compareLimiter;
  private MemoryStore compareMemory;
  private ReplayReport.Side compared;
  private String compareName;

  private long lastT = Long.MIN_VALUE;
  private long lastSweepMicros = Long.MIN_VALUE;
  private long requests;
  private long allowed;
  private long degraded;

  /**
   * @param memory the memory store to sweep on the trace clock, or null for a remote store
   * @param traceName how requests are located in messages: {@code file:line}; null for a
   *     synthetic trace ({@code synthetic request N})
   */
  Replayer(RateLimiter limiter, MemoryStore memory, ReplayClock clock, PrintWriter out, boolean summaryOnly,
      RuleSet rules, String traceName) {
    this.limiter = limiter;
    this.memory = memory;
    this.clock = clock;
    this.out = out;
    this.summaryOnly = summaryOnly;
    this.rules = rules;
    this.traceName = traceName;
  }

  /** Gathers every decision into {@code side} of a report. */
  Replayer reportTo(ReplayReport.Side side) {
    this.reported = side;
    return this;
  }

  /**
   * Decides every request a second time with {@code other} (on a memory store of its own, on the
   * same clock), into {@code side}: what another rule set would have decided on the same trace.
   */
  Replayer compareWith(RateLimiter other, MemoryStore otherMemory, ReplayReport.Side side, String name) {
    this.compareLimiter = other;
    this.compareMemory = otherMemory;
    this.compared = side;
    this.compareName = name;
    return this;
  }

  private String where(long at) {
    return traceName == null ? "synthetic request " + at : traceName + ":" + at;
  }

  /** Moves the replay clock to {@code t}; the time in microseconds. */
  private long advance(long t, long at) {
    if (t < lastT) {
      throw new CliException(where(at) + ": t went backwards (" + t + " after " + lastT
          + "); a trace must be in time order");
    }
    lastT = t;
    long micros = t * 1000;
    clock.set(micros);
    return micros;
  }

  @Override
  public void accept(long t, OperationRequest request, long at) {
    long micros = advance(t, at);
    Decision d;
    try {
      d = limiter.acquire(request.atMicros(micros));
    } catch (IllegalArgumentException | StoreException e) {
      // The limiter's errors name the operation, and the attribute, rule or key at fault.
      throw new CliException(where(at) + ": " + e.getMessage());
    }
    if (compareLimiter != null) {
      try {
        compared.record(t, compareLimiter.acquire(request.atMicros(micros)));
      } catch (IllegalArgumentException | StoreException e) {
        throw new CliException(where(at) + ": --compare " + compareName + ": " + e.getMessage());
      }
    }
    record(t, micros, d);
  }

  @Override
  public void accept(long t, List<Item> items, long at) {
    long micros = advance(t, at);
    Decision d;
    try {
      d = limiter.acquire(new Request(items, micros));
    } catch (InvalidKeyException e) {
      // The trace is wrong at this line; in a line of several items, at this item.
      throw new CliException(where(at) + ": " + (items.size() > 1 ? "item " + (e.item() + 1) + ": " : "")
          + e.getMessage());
    } catch (IllegalArgumentException | StoreException e) {
      // An UnknownRuleException or InvalidCostException names its rule (and the key of a repeated
      // item), which is how to find it on the line. A request the store could not decide stops the
      // replay too: its decisions would not be the store's.
      throw new CliException(where(at) + ": " + e.getMessage());
    }
    if (compareLimiter != null) {
      try {
        compared.record(t, compareLimiter.acquire(new Request(items, micros)));
      } catch (IllegalArgumentException | StoreException e) {
        throw new CliException(where(at) + ": --compare " + compareName + ": " + e.getMessage());
      }
    }
    record(t, micros, d);
  }

  private void record(long t, long micros, Decision d) {
    count(d);
    if (reported != null) {
      reported.record(t, d);
    }
    if (!summaryOnly) {
      line.setLength(0);
      DecisionJson.appendReplayLine(line, t, d);
      line.append('\n');
      out.append(line);
    }
    if ((requests & (SWEEP_EVERY - 1)) == 0) {
      sweep(micros);
      if (out.checkError()) {
        throw new CliException("cannot write the output (closed?); stopped after " + requests + " requests");
      }
    }
  }

  /** Forgets idle keys, so a long trace over many keys runs in bounded memory. */
  private void sweep(long micros) {
    if (micros - lastSweepMicros >= 1_000_000) {
      if (memory != null) {
        memory.cleanUp(micros);
      }
      if (compareMemory != null) {
        compareMemory.cleanUp(micros);
      }
      lastSweepMicros = micros;
    }
  }

  private void count(Decision d) {
    requests++;
    if (d.allowed()) {
      allowed++;
    }
    if (d.degraded()) {
      degraded++;
    }
    for (ItemDecision it : d.items()) {
      long[] c = perRule.computeIfAbsent(it.rule(), r -> new long[3]);
      c[d.allowed() ? 0 : 1]++;
      if (it.shadow() && !it.allowed()) {
        c[2]++;
      }
    }
  }

  /**
   * Writes {@code {"summary":{"requests","allowed","denied","rules":{name:{"allowed","denied"}}}}}:
   * per rule, the items of admitted and of denied requests (a shadow rule's adds
   * {@code shadowDenied}: items it would have denied), rules in configuration order, those that
   * saw no request left out.
   */
  void finish() {
    StringBuilder sb = new StringBuilder(256);
    sb.append("{\"summary\":{\"requests\":").append(requests)
        .append(",\"allowed\":").append(allowed)
        .append(",\"denied\":").append(requests - allowed);
    if (degraded > 0) {
      sb.append(",\"degraded\":").append(degraded);
    }
    sb.append(",\"rules\":{");
    boolean first = true;
    for (Rule r : rules.rules()) {
      long[] c = perRule.get(r.name());
      if (c == null) {
        continue;
      }
      if (!first) {
        sb.append(',');
      }
      first = false;
      DecisionJson.string(sb, r.name());
      sb.append(":{\"allowed\":").append(c[0]).append(",\"denied\":").append(c[1]);
      if (r.shadow()) {
        sb.append(",\"shadowDenied\":").append(c[2]);
      }
      sb.append('}');
    }
    sb.append("}}}\n");
    out.append(sb);
    out.flush();
  }
}
