package dev.sluice.internal;

import dev.sluice.DecisionListener;
import dev.sluice.RuleSet;
import dev.sluice.Sleeper;
import dev.sluice.Ticker;
import dev.sluice.spi.Store;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Everything an {@link Engine} is made of, as {@code Sluice.builder()} checked it.
 *
 * @param rules the rules in force at the start
 * @param store where decisions are made
 * @param local the in-process store of {@code failure_mode: local}
 * @param localShare the share of each limit {@code local} holds; NaN for 1 / the instances counted
 * @param maxKeyBytes the longest key, in bytes of UTF-8
 * @param storeTimeout how long a decision waits for a remote store
 * @param maxInFlight the most store calls waiting for their answer at once
 * @param listeners told of every decision, in order
 * @param sleeper what the blocking acquire sleeps with
 * @param ticker the clock of cached bans and denials, and of the expiries policies are given
 * @param denialCacheKeys how many denials of the store to keep (see {@link DenialCache}); 0 for
 *     none. Ignored on a local store, which answers as fast as a cache would.
 * @param maxPolicyBytes the most bytes the cache of the store's policies holds ({@link PolicyCache})
 */
public record EngineConfig(RuleSet rules, Store store, Store local, double localShare, int maxKeyBytes,
    Duration storeTimeout, int maxInFlight, List<DecisionListener> listeners, Sleeper sleeper, Ticker ticker,
    int denialCacheKeys, long maxPolicyBytes) {

  public EngineConfig {
    Objects.requireNonNull(rules, "rules");
    Objects.requireNonNull(store, "store");
    Objects.requireNonNull(local, "local");
    Objects.requireNonNull(storeTimeout, "storeTimeout");
    listeners = List.copyOf(listeners);
    Objects.requireNonNull(sleeper, "sleeper");
    Objects.requireNonNull(ticker, "ticker");
  }
}
