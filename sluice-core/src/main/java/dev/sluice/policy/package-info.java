/**
 * What a limiter's operators change while it runs, through {@link dev.sluice.policy.Policies}
 * ({@code RateLimiter.policies()}): a key's {@link dev.sluice.policy.LiveLimit}
 * ({@link dev.sluice.policy.KeyLimit}), {@link dev.sluice.policy.Ban}s, allow and deny lists
 * ({@link dev.sluice.policy.ListKind}), audit values and top offenders
 * ({@link dev.sluice.policy.Offender}), listed by {@link dev.sluice.policy.Page}. Policies are kept
 * by the store, bounded in bytes ({@link dev.sluice.policy.PolicyFullException}), and shared by
 * every limiter on it.
 */
package dev.sluice.policy;
