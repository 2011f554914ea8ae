package dev.sluice.memory;

import dev.sluice.policy.LiveLimit;
import dev.sluice.algorithm.Heap;
import dev.sluice.spi.PolicyRecord;

/**
 * Heap bytes of a policy record, estimated as {@link Heap} estimates the memory store's keys: the
 * store's copy ({@link MemoryPolicyStore}: the record, its strings, its cursor and its entries in
 * sorted maps) and a limiter's copy ({@code PolicyCache}: the key, the decoded policy and its map
 * entry). Both bounds on policies are in these bytes, so that a flood of large records meets them
 * long before the heap: a live limit of a 512-byte key and 16 windows is about 1.5 KB in the
 * store and 1.5 KB in a limiter.
 */
public final class PolicyBytes {
  /** An entry of a {@link java.util.TreeMap} or {@link java.util.TreeSet}: key, value, three links, colour. */
  static final long TREE_ENTRY = Heap.object(5L * Heap.REF + 1);
  /** A {@link dev.sluice.Window} and its {@link java.time.Duration}, and its slot in a list. */
  private static final long WINDOW = Heap.object(8 + Heap.REF) + Heap.object(8 + 4) + Heap.REF;

  private PolicyBytes() {}

  /** The store's copy of {@code r}: the record, its four strings, and its entries (expiry too). */
  public static long stored(PolicyRecord r) {
    long b = Heap.object(4L * Heap.REF + 8) + Heap.string(r.rule()) + Heap.string(r.key()) + Heap.string(r.value())
        // The cursor, "<rule> <key>", is a string of its own: the sorted map's key.
        + Heap.string(r.cursor())
        + TREE_ENTRY;
    if (r.expiresAtMillis() != 0) {
      b += Heap.object(8 + 2L * Heap.REF) + TREE_ENTRY;
    }
    return b;
  }

  /** A limiter's copy of {@code r}: its key, what it decodes to, and a map entry. */
  public static long cached(PolicyRecord r) {
    return switch (r.kind()) {
      // Windows are counted one per 6 characters of the encoded value ("10/PT1M" is 7): a little
      // more than they are, never less.
      case LIMIT -> r.value().startsWith("tier:") ? limit(r.key(), r.value().length() - 5, 0)
          : limit(r.key(), 0, r.value().length() / 6 + 1);
      case BAN -> ban(r.key());
      case ALLOW, DENY -> entry(r.key());
    };
  }

  /** A limiter's live limit of {@code key}: its map entry, key, and tier name or windows. */
  public static long limit(String key, LiveLimit l) {
    return l.tier() != null ? limit(key, l.tier().length(), 0) : limit(key, 0, l.windows().size());
  }

  private static long limit(String key, int tierChars, int windows) {
    return Heap.MAP_ENTRY + Heap.string(key) + Heap.object(2L * Heap.REF)
        + (windows == 0 ? Heap.object(Heap.REF + 6) + Heap.align(Heap.ARRAY_HEADER + tierChars)
            : Heap.object(Heap.REF) + Heap.align(Heap.ARRAY_HEADER) + windows * WINDOW);
  }

  /** A limiter's ban of {@code key}: its map entry, key and end. */
  public static long ban(String key) {
    return Heap.MAP_ENTRY + Heap.string(key) + Heap.object(8);
  }

  /** A limiter's run-time list entry: its set entry, and its place in the access lists rebuilt from it. */
  public static long entry(String key) {
    return Heap.string(key) + 3 * Heap.MAP_ENTRY + Heap.object(4L * Heap.REF + 32);
  }

  /** Both copies: what a record put on the memory store costs its process. */
  public static long inProcess(PolicyRecord r) {
    return stored(r) + cached(r);
  }
}
