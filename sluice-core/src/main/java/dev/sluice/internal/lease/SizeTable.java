package dev.sluice.internal.lease;

import dev.sluice.spi.LeaseBoard;
import java.util.ArrayList;
import java.util.List;

/**
 * The sizes the leader publishes for one instance (see docs/scaling.md, "Rebalancing"): per leased
 * key, the most units the instance may hold unused, and its share of the key's demand across the
 * fleet in millionths (what the service's quota streams take their part of a rate by). A key it
 * does not list gets no size while a leader leads: the instance decides it exactly. Encoded like {@link UsageReport}, in at most
 * {@link LeaseBoard#MAX_ENTRY_BYTES}.
 */
public record SizeTable(long fingerprint, List<Entry> entries) {
  static final int VERSION = 2;
  /** A share of the whole demand: {@code SHARE_SCALE} millionths. */
  public static final long SHARE_SCALE = 1_000_000;

  /** One key's size, and the instance's share of the key's demand in millionths (0 to {@link #SHARE_SCALE}). */
  public record Entry(String rule, String key, long size, long share) {
    public Entry {
      if (share < 0 || share > SHARE_SCALE) {
        throw new IllegalArgumentException("a share is 0 to " + SHARE_SCALE + " millionths, was " + share);
      }
    }

    /** A size without a share of demand. */
    public Entry(String rule, String key, long size) {
      this(rule, key, size, 0);
    }
  }

  public SizeTable {
    entries = List.copyOf(entries);
  }

  /**
   * The table's bytes.
   *
   * @throws IllegalArgumentException if they would exceed {@link LeaseBoard#MAX_ENTRY_BYTES}: the
   *     leader sizes at most the keys an instance reported, which fit a report of that bound
   */
  public byte[] encode() {
    Wire.Out out = new Wire.Out().u8(VERSION).fixed64(fingerprint);
    for (Entry e : entries) {
      out.string(e.rule()).string(e.key()).varint(e.size()).varint(e.share());
    }
    if (out.size() > LeaseBoard.MAX_ENTRY_BYTES) {
      throw new IllegalArgumentException("sizes of " + entries.size() + " keys take " + out.size()
          + " bytes; at most " + LeaseBoard.MAX_ENTRY_BYTES);
    }
    return out.toByteArray();
  }

  /**
   * Reads a table, refusing anything but what {@link #encode} writes.
   *
   * @throws IllegalArgumentException saying what is wrong and at which byte
   */
  public static SizeTable decode(byte[] bytes, int maxKeyBytes) {
    if (bytes.length > LeaseBoard.MAX_ENTRY_BYTES) {
      throw new IllegalArgumentException("sizes are at most " + LeaseBoard.MAX_ENTRY_BYTES + " bytes, were "
          + bytes.length);
    }
    Wire.In in = new Wire.In(bytes);
    int version = in.u8("the version");
    if (version != VERSION) {
      throw new IllegalArgumentException("sizes of version " + version + "; this instance reads version " + VERSION);
    }
    long fingerprint = in.fixed64("the fingerprint");
    List<Entry> entries = new ArrayList<>();
    while (!in.done()) {
      String rule = in.string("a rule", UsageReport.MAX_RULE_BYTES);
      String key = in.string("a key", maxKeyBytes);
      if (rule.isEmpty() || key.isEmpty()) {
        throw new IllegalArgumentException("an empty rule or key before byte " + in.position());
      }
      long size = in.varint("a size");
      long share = in.varint("a share");
      if (share > SHARE_SCALE) {
        throw new IllegalArgumentException("a share of " + share + " millionths before byte " + in.position());
      }
      entries.add(new Entry(rule, key, size, share));
    }
    return new SizeTable(fingerprint, entries);
  }
}
