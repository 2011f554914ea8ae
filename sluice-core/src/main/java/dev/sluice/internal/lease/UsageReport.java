package dev.sluice.internal.lease;

import dev.sluice.spi.LeaseBoard;
import java.util.ArrayList;
import java.util.List;

/**
 * An instance's use of its leased keys over one report interval, as it is kept on the lease board
 * for the leader (see docs/scaling.md, "Usage reports"): the interval's length, the fingerprint of
 * the instance's rules (a leader on other rules skips what differs), and per key, hottest first,
 * the units admitted from leases and the units of requests sent to the store (demand the size
 * did not cover: the store admitted or denied them) in the interval, the
 * size the instance uses and the units it holds. Counts are incremental: a lost report loses one
 * interval of demand, never the bound.
 *
 * <p>Encoded in at most {@link LeaseBoard#MAX_ENTRY_BYTES}: the hottest keys that fit go, the rest
 * wait for a later interval.
 */
public record UsageReport(long elapsedMillis, long fingerprint, List<Entry> entries) {
  static final int VERSION = 1;
  /** Rule names are at most 128 characters of ASCII (see {@code Rule.builder}). */
  static final int MAX_RULE_BYTES = 128;

  /** One key's use. */
  public record Entry(String rule, String key, long admitted, long sent, long sizeInUse, long held) {}

  public UsageReport {
    entries = List.copyOf(entries);
  }

  /**
   * The report in at most {@code maxBytes}: the entries in order while they fit.
   * The answer's {@link Encoded#entries} says how many went.
   */
  public Encoded encode(int maxBytes) {
    Wire.Out out = new Wire.Out().u8(VERSION).varint(elapsedMillis).fixed64(fingerprint);
    int written = 0;
    List<byte[]> parts = new ArrayList<>();
    int total = out.size();
    for (Entry e : entries) {
      Wire.Out one = new Wire.Out().string(e.rule()).string(e.key()).varint(e.admitted()).varint(e.sent())
          .varint(e.sizeInUse()).varint(e.held());
      byte[] b = one.toByteArray();
      if (total + b.length > maxBytes) {
        break;
      }
      parts.add(b);
      total += b.length;
      written++;
    }
    byte[] head = out.toByteArray();
    byte[] all = new byte[total];
    System.arraycopy(head, 0, all, 0, head.length);
    int at = head.length;
    for (byte[] p : parts) {
      System.arraycopy(p, 0, all, at, p.length);
      at += p.length;
    }
    return new Encoded(all, written);
  }

  /** An encoding and how many of the report's entries it holds. */
  public record Encoded(byte[] bytes, int entries) {}

  /**
   * Reads a report, refusing anything but what {@link #encode} writes: another version, a
   * truncated or oversized entry, a key longer than {@code maxKeyBytes}, trailing bytes.
   *
   * @throws IllegalArgumentException saying what is wrong and at which byte
   */
  public static UsageReport decode(byte[] bytes, int maxKeyBytes) {
    if (bytes.length > LeaseBoard.MAX_ENTRY_BYTES) {
      throw new IllegalArgumentException("a report is at most " + LeaseBoard.MAX_ENTRY_BYTES + " bytes, was "
          + bytes.length);
    }
    Wire.In in = new Wire.In(bytes);
    int version = in.u8("the version");
    if (version != VERSION) {
      throw new IllegalArgumentException("a report of version " + version + "; this instance reads version " + VERSION);
    }
    long elapsed = in.varint("the interval");
    long fingerprint = in.fixed64("the fingerprint");
    List<Entry> entries = new ArrayList<>();
    while (!in.done()) {
      String rule = in.string("a rule", MAX_RULE_BYTES);
      String key = in.string("a key", maxKeyBytes);
      if (rule.isEmpty() || key.isEmpty()) {
        throw new IllegalArgumentException("an empty rule or key before byte " + in.position());
      }
      entries.add(new Entry(rule, key, in.varint("admitted"), in.varint("sent to the store"), in.varint("the size in use"),
          in.varint("the units held")));
    }
    return new UsageReport(elapsed, fingerprint, entries);
  }
}
