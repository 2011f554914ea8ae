package dev.sluice;

import java.util.List;

/**
 * The limiters that share a store, as their heartbeats in it tell ({@link RateLimiter#fleet}).
 *
 * @param self this limiter's id in the store (the process id and 64 random bits), the id it holds
 *     leases under too
 * @param live how many instances the store heard from within the last 3 s, this one included
 * @param instances the instances heard most recently, at most the number asked for: when
 *     {@code live} is larger, the rest are left out
 */
public record FleetView(String self, int live, List<Instance> instances) {
  /** The most instances one view lists. */
  public static final int MAX_LISTED = 1_000;

  public FleetView {
    instances = List.copyOf(instances);
  }

  /**
   * One instance.
   *
   * @param id its id in the store
   * @param lastHeartbeatAgeMillis how long ago, on the store's clock, its last heartbeat was
   */
  public record Instance(String id, long lastHeartbeatAgeMillis) {}
}
