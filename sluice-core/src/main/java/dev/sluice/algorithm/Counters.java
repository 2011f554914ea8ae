package dev.sluice.algorithm;

/**
 * Counters each tagged with the bucket of time it counts (the bucket's index since the epoch),
 * as fixed and sliding windows keep them: a slot tagged with another bucket counts nothing for
 * this one, so a slot is reused for a newer bucket without ever being cleared.
 */
final class Counters {
  private Counters() {}

  /** The count of {@code bucket} in {@code slot}: 0 if the slot holds another bucket. */
  static long count(long[] bucketOf, long[] count, int slot, long bucket) {
    return bucketOf[slot] == bucket ? count[slot] : 0;
  }

  /** Adds {@code cost} to {@code bucket}'s count in {@code slot}, starting it if the slot held another. */
  static void add(long[] bucketOf, long[] count, int slot, long bucket, long cost) {
    if (bucketOf[slot] != bucket) {
      bucketOf[slot] = bucket;
      count[slot] = 0;
    }
    count[slot] += cost;
  }
}
