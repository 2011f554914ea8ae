package dev.sluice;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A named limit: one or more windows counted by one algorithm, with optional per-key overrides.
 * Immutable; equal rules have equal definitions, which is how a reload tells a changed rule from
 * an unchanged one.
 */
public final class Rule {

  /** Default number of sub-buckets per window for {@link Algorithm#SLIDING_WINDOW}. */
  public static final int DEFAULT_PRECISION = 10;

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.:/-]{1,128}");

  private final String name;
  private final List<Window> windows;
  private final Algorithm algorithm;
  private final Duration maxWait;
  private final int precision;
  private final List<KeyOverride> overrides;
  private final boolean shadow;
  private final FailureMode failureMode;
  private final BanPolicy ban;
  private final AuditPolicy audit;
  private final LeasePolicy lease;

  private Rule(Builder b) {
    this.name = b.name;
    this.windows = List.copyOf(b.windows);
    this.algorithm = b.algorithm;
    this.maxWait = b.maxWait;
    this.precision = b.precision;
    this.overrides = List.copyOf(b.overrides);
    this.shadow = b.shadow;
    this.failureMode = b.failureMode;
    this.ban = b.ban;
    this.audit = b.audit;
    this.lease = b.lease;
  }

  /**
   * Starts a rule.
   *
   * @throws IllegalArgumentException if {@code name} is empty, longer than 128 characters or has
   *     characters other than letters, digits and {@code _ . : / -}
   */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  public Builder toBuilder() {
    Builder b = new Builder(name);
    b.windows.addAll(windows);
    b.algorithm = algorithm;
    b.maxWait = maxWait;
    b.precision = precision;
    b.overrides.addAll(overrides);
    b.shadow = shadow;
    b.failureMode = failureMode;
    b.ban = ban;
    b.audit = audit;
    b.lease = lease;
    return b;
  }

  public String name() {
    return name;
  }

  /** The rule's default windows, as configured. */
  public List<Window> windows() {
    return windows;
  }

  /** The windows that apply to {@code key}: those of the first matching override, else the rule's. */
  public List<Window> windowsFor(String key) {
    for (KeyOverride o : overrides) {
      if (o.matches(key)) {
        return o.windows();
      }
    }
    return windows;
  }

  public Algorithm algorithm() {
    return algorithm;
  }

  /**
   * For {@link Algorithm#LEAKY_BUCKET}: the longest a request may wait for its slot. Defaults to
   * the longest window's period (a queue of L).
   */
  public Duration maxWait() {
    if (maxWait != null) {
      return maxWait;
    }
    return windows.stream().map(Window::period).max(Comparator.naturalOrder()).orElseThrow();
  }

  /**
   * For {@link Algorithm#LEAKY_BUCKET}: the longest a request counted in {@code windows} (the
   * windows of a key, {@link #windowsFor}) may wait: {@code max_wait} if set, else the longest of
   * those windows' periods, so an overridden key gets a queue of its own limit.
   */
  public Duration maxWaitFor(List<Window> keyWindows) {
    if (maxWait != null) {
      return maxWait;
    }
    return keyWindows.stream().map(Window::period).max(Comparator.naturalOrder()).orElseThrow();
  }

  /** Whether {@code max_wait} was set explicitly. */
  public boolean hasExplicitMaxWait() {
    return maxWait != null;
  }

  /** For {@link Algorithm#SLIDING_WINDOW}: sub-buckets per window. */
  public int precision() {
    return precision;
  }

  public List<KeyOverride> overrides() {
    return overrides;
  }

  /** Leased mode's settings; null for exact mode (the default). */
  public LeasePolicy lease() {
    return lease;
  }

  /** A shadow rule is evaluated and reported but never denies. */
  public boolean shadow() {
    return shadow;
  }

  public FailureMode failureMode() {
    return failureMode;
  }

  /** The rule's penalty box, or null when it bans no key automatically. */
  public BanPolicy ban() {
    return ban;
  }

  /** What the store records about who consumed each key, or null when nothing is recorded. */
  public AuditPolicy audit() {
    return audit;
  }

  /** The longest period of any window of this rule, overrides included, in microseconds. */
  public long longestPeriodMicros() {
    long max = 0;
    for (Window w : windows) {
      max = Math.max(max, w.periodMicros());
    }
    for (KeyOverride o : overrides) {
      for (Window w : o.windows()) {
        max = Math.max(max, w.periodMicros());
      }
    }
    return max;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Rule r)) {
      return false;
    }
    return name.equals(r.name) && windows.equals(r.windows) && algorithm == r.algorithm
        && Objects.equals(maxWait, r.maxWait) && precision == r.precision
        && overrides.equals(r.overrides) && shadow == r.shadow && failureMode == r.failureMode
        && Objects.equals(lease, r.lease)
        && Objects.equals(ban, r.ban) && Objects.equals(audit, r.audit);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, windows, algorithm, maxWait, precision, overrides, shadow, failureMode, ban, audit, lease);
  }

  @Override
  public String toString() {
    return "Rule{" + name + " " + algorithm.configName() + " " + windows
        + (overrides.isEmpty() ? "" : " overrides=" + overrides) + (shadow ? " shadow" : "")
        + (ban == null ? "" : " " + ban) + (audit == null ? "" : " " + audit)
        + (lease == null ? "" : " " + lease) + "}";
  }

  /** Builds a {@link Rule}. Not thread-safe. */
  public static final class Builder {
    private final String name;
    private final List<Window> windows = new ArrayList<>();
    private Algorithm algorithm = Algorithm.SLIDING_LOG;
    private Duration maxWait;
    private int precision = DEFAULT_PRECISION;
    private final List<KeyOverride> overrides = new ArrayList<>();
    private boolean shadow;
    private FailureMode failureMode = FailureMode.OPEN;
    private BanPolicy ban;
    private AuditPolicy audit;
    private LeasePolicy lease;

    private Builder(String name) {
      Objects.requireNonNull(name, "name");
      if (!NAME.matcher(name).matches()) {
        throw new IllegalArgumentException(
            "rule name must be 1-128 characters of letters, digits and _ . : / -, was '" + name + "'");
      }
      this.name = name;
    }

    public Builder window(long limit, Duration period) {
      windows.add(new Window(limit, period));
      return this;
    }

    public Builder window(Window w) {
      windows.add(Objects.requireNonNull(w, "window"));
      return this;
    }

    public Builder windows(List<Window> ws) {
      windows.clear();
      ws.forEach(this::window);
      return this;
    }

    public Builder algorithm(Algorithm a) {
      this.algorithm = Objects.requireNonNull(a, "algorithm");
      return this;
    }

    /** @throws IllegalArgumentException if negative */
    public Builder maxWait(Duration d) {
      if (d != null && d.isNegative()) {
        throw new IllegalArgumentException("max_wait must be >= 0, was " + d);
      }
      this.maxWait = d;
      return this;
    }

    /** @throws IllegalArgumentException unless 1 ≤ precision ≤ 1000 */
    public Builder precision(int p) {
      if (p < 1 || p > 1000) {
        throw new IllegalArgumentException("precision must be between 1 and 1000, was " + p);
      }
      this.precision = p;
      return this;
    }

    public Builder override(KeyOverride o) {
      overrides.add(Objects.requireNonNull(o, "override"));
      return this;
    }

    public Builder shadow(boolean s) {
      this.shadow = s;
      return this;
    }

    public Builder failureMode(FailureMode m) {
      this.failureMode = Objects.requireNonNull(m, "failureMode");
      return this;
    }

    /** Bans keys automatically (null: never). */
    public Builder ban(BanPolicy b) {
      this.ban = b;
      return this;
    }

    /** Records who consumed each key (null: nothing). */
    public Builder audit(AuditPolicy a) {
      this.audit = a;
      return this;
    }

    /** Decides the rule in leased mode (null: exact, the default). */
    public Builder lease(LeasePolicy l) {
      this.lease = l;
      return this;
    }

    /**
     * @throws IllegalArgumentException if the rule has no window, or is leased and a leaky bucket,
     *     audited, or with a lease longer than its shortest period
     */
    public Rule build() {
      if (windows.isEmpty()) {
        throw new IllegalArgumentException("rule '" + name + "' needs at least one window");
      }
      if (lease != null) {
        checkLease();
      }
      return new Rule(this);
    }

    private void checkLease() {
      if (algorithm == Algorithm.LEAKY_BUCKET) {
        throw new IllegalArgumentException("rule '" + name + "': a leaky_bucket cannot be leased (its promise is the"
            + " spacing of start times, which units held by one instance do not keep); use token_bucket for a"
            + " smooth rate");
      }
      if (audit != null) {
        throw new IllegalArgumentException("rule '" + name + "': an audited rule cannot be leased (the audit is"
            + " written in the decision's own store call, which a leased decision does not make)");
      }
      Duration shortest = null;
      for (Window w : windows) {
        shortest = shortest == null || w.period().compareTo(shortest) < 0 ? w.period() : shortest;
      }
      for (KeyOverride o : overrides) {
        for (Window w : o.windows()) {
          shortest = w.period().compareTo(shortest) < 0 ? w.period() : shortest;
        }
      }
      if (lease.leaseLength().compareTo(shortest) > 0) {
        throw new IllegalArgumentException("rule '" + name + "': lease_length " + lease.leaseLength()
            + " is longer than the rule's shortest period, " + shortest + " (units given back after the window"
            + " forgot them would free nothing)");
      }
    }
  }
}
