package dev.sluice.server.http;

import dev.sluice.internal.lease.UsageReport;
import dev.sluice.spi.LeaseBoard;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the lease board says of one leased rule, read from every instance's last usage report:
 * per instance for one key, or per key summed over the instances. Counts are those of each
 * instance's last report interval (reports are incremental), sizes and units held as reported then.
 *
 * <p>Bounded: the reports read are the board's ({@link #MAX_READ_BYTES}); at most {@link #MAX_ROWS}
 * rows and {@link #MAX_ROW_KEY_CHARS} characters of keys are answered, and at most
 * {@link #MAX_KEYS_SUMMED} keys are summed, whatever the reports hold.
 */
final class LeaseBoardView {
  /** The most bytes of reports read from the board for one answer. */
  static final long MAX_READ_BYTES = 4L * 1024 * 1024;
  /** The most rows an answer holds. */
  static final int MAX_ROWS = 1_000;
  /** The most characters of keys an answer holds: a thousand keys of a few hundred bytes each. */
  static final int MAX_ROW_KEY_CHARS = 1024 * 1024;
  /** The most distinct keys summed: what the reports read could hold beyond it is left out. */
  static final int MAX_KEYS_SUMMED = 10_000;

  /** One instance's report of the key, or one key's sums over the instances that reported it. */
  record Row(String name, int instances, long admitted, long sent, long intervalMs, long sizeInUse, long held) {}

  /**
   * @param rows per instance (by id) for a key, or per key (most demand first) for the rule
   * @param total the rows' sums, over every instance or key read, those left out of rows included
   * @param truncated whether rows were left out to keep within the bounds
   * @param reports instance reports read from the board
   * @param unreadable reports in a format this service does not read (another version), skipped
   * @param partial whether the board may hold more reports than the bytes read
   */
  record View(List<Row> rows, Row total, boolean truncated, int reports, int unreadable, boolean partial) {}

  private LeaseBoardView() {}

  /** Per instance that reported {@code key} of {@code rule}, by instance id. */
  static View ofKey(String rule, String key, Map<String, byte[]> reports) {
    List<Row> rows = new ArrayList<>();
    long admitted = 0;
    long sent = 0;
    long size = 0;
    long held = 0;
    int unreadable = 0;
    long bytes = 0;
    for (Map.Entry<String, byte[]> r : new TreeMap<>(reports).entrySet()) {
      bytes += r.getValue().length;
      UsageReport report = decode(r.getValue());
      if (report == null) {
        unreadable++;
        continue;
      }
      for (UsageReport.Entry e : report.entries()) {
        if (e.rule().equals(rule) && e.key().equals(key)) {
          rows.add(new Row(r.getKey(), 1, e.admitted(), e.sent(), report.elapsedMillis(), e.sizeInUse(), e.held()));
          admitted += e.admitted();
          sent += e.sent();
          size += e.sizeInUse();
          held += e.held();
          break;
        }
      }
    }
    Row total = new Row(key, rows.size(), admitted, sent, 0, size, held);
    return bounded(rows, total, reports.size(), unreadable, bytes);
  }

  /** Per key of {@code rule}, summed over the instances that reported it, most demand first. */
  static View ofRule(String rule, Map<String, byte[]> reports) {
    // Per key: instances, admitted, sent to the store, size in use, units held.
    Map<String, long[]> sums = new HashMap<>();
    long[] all = new long[5];
    boolean dropped = false;
    int unreadable = 0;
    long bytes = 0;
    for (byte[] data : reports.values()) {
      bytes += data.length;
      UsageReport report = decode(data);
      if (report == null) {
        unreadable++;
        continue;
      }
      for (UsageReport.Entry e : report.entries()) {
        if (!e.rule().equals(rule)) {
          continue;
        }
        long[] s = sums.get(e.key());
        if (s == null && sums.size() < MAX_KEYS_SUMMED) {
          s = new long[5];
          sums.put(e.key(), s);
          all[0]++;
        }
        dropped |= s == null;
        add(all, e);
        if (s != null) {
          s[0]++;
          add(s, e);
        }
      }
    }
    List<Row> rows = new ArrayList<>(sums.size());
    for (Map.Entry<String, long[]> e : sums.entrySet()) {
      long[] s = e.getValue();
      rows.add(new Row(e.getKey(), (int) s[0], s[1], s[2], 0, s[3], s[4]));
    }
    rows.sort(Comparator.comparingLong((Row r) -> -(r.admitted() + r.sent())).thenComparing(Row::name));
    // The keys counted are those summed: past the bound, how many more there are is not known.
    Row total = new Row(null, (int) all[0], all[1], all[2], 0, all[3], all[4]);
    View v = bounded(rows, total, reports.size(), unreadable, bytes);
    return dropped ? new View(v.rows(), v.total(), true, v.reports(), v.unreadable(), v.partial()) : v;
  }

  private static void add(long[] sums, UsageReport.Entry e) {
    sums[1] += e.admitted();
    sums[2] += e.sent();
    sums[3] += e.sizeInUse();
    sums[4] += e.held();
  }

  private static View bounded(List<Row> rows, Row total, int reports, int unreadable, long bytes) {
    int n = 0;
    long chars = 0;
    while (n < rows.size() && n < MAX_ROWS && chars + rows.get(n).name().length() <= MAX_ROW_KEY_CHARS) {
      chars += rows.get(n).name().length();
      n++;
    }
    // A report that would have passed the bytes asked for was left on the board.
    boolean partial = bytes + LeaseBoard.MAX_ENTRY_BYTES > MAX_READ_BYTES;
    return new View(List.copyOf(rows.subList(0, n)), total, n < rows.size(), reports, unreadable, partial);
  }

  /** The report, or null if it is in a format this service does not read. */
  private static UsageReport decode(byte[] data) {
    try {
      // A key is never longer than the report holding it.
      return UsageReport.decode(data, LeaseBoard.MAX_ENTRY_BYTES);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}
