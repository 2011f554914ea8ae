/**
 * The limiter. Read it in layers.
 *
 * <p><b>First:</b> {@link dev.sluice.Sluice} builds a {@link dev.sluice.RateLimiter} from
 * {@link dev.sluice.Rule}s (each of one or more {@link dev.sluice.Window}s, decided by an
 * {@link dev.sluice.Algorithm}); {@code tryAcquire(rule, key)} answers yes or no, and
 * {@code acquire} a {@link dev.sluice.Decision} that explains itself: an
 * {@link dev.sluice.ItemDecision} per item, a {@link dev.sluice.WindowState} per window, a
 * {@link dev.sluice.DenyReason}. A {@link dev.sluice.Request} of several {@link dev.sluice.Item}s
 * is decided all or nothing.
 *
 * <p><b>Then:</b> a {@link dev.sluice.RuleSet} (rules, per-key overrides
 * {@link dev.sluice.KeyOverride}, operations) swapped at run time; operations
 * ({@link dev.sluice.Operation}, {@link dev.sluice.OperationItem}, {@link dev.sluice.Attribute},
 * {@link dev.sluice.OperationRequest}) that turn a request's attributes into items; what a rule does
 * when its store fails ({@link dev.sluice.FailureMode}); listeners
 * ({@link dev.sluice.DecisionListener}); a rule's {@link dev.sluice.BanPolicy} and
 * {@link dev.sluice.AuditPolicy}; the clock ({@link dev.sluice.Ticker}, {@link dev.sluice.Sleeper});
 * and the errors, each naming what was wrong.
 *
 * <p><b>At run time:</b> {@link dev.sluice.policy} — live limits, bans, allow and deny lists, audit
 * and top offenders, through {@code RateLimiter.policies()}. <b>For a store of your own:</b>
 * {@code dev.sluice.spi}.
 */
package dev.sluice;
