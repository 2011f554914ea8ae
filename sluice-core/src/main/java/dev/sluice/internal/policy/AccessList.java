package dev.sluice.internal.policy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An access list of a rule ({@link dev.sluice.policy.ListKind}): which keys it matches. An entry is
 *
 * <ul>
 *   <li>a key, matched exactly ({@code user:42});
 *   <li>a prefix followed by {@code *}, matching every key that starts with the prefix
 *       ({@code partner:*});
 *   <li>a prefix followed by a CIDR range ({@code ip:10.0.0.0/8}, {@code ip:2001:db8::/32}),
 *       matching the keys made of that prefix and an address inside the range
 *       ({@code ip:10.1.2.3}) or a network inside it ({@code ip:10.1.2.0/24}, as grouped
 *       {@linkplain dev.sluice.Attribute IP attributes} make). A prefix followed by an address
 *       alone is its one-address range ({@code /32}, {@code /128}), so that every spelling of the
 *       address matches. IPv4-mapped IPv6 addresses ({@code ::ffff:10.1.2.3}) count as IPv4.
 * </ul>
 *
 * <p>Where the prefix ends and the address begins: the address is the longest ending of the
 * entry (before the {@code /}) that reads as an IPv4 or IPv6 address and follows a separator (a
 * character other than a letter or digit, as in {@code ip6:2001:db8::/32}) or starts the entry.
 * The prefix is what comes before it.
 * A key matches such an entry when it starts with the prefix and the rest reads as an address or
 * network inside the range.
 *
 * <p>Lookups cost no allocation for a key that starts with no CIDR entry's prefix: exact keys are
 * a hash set, prefixes a sorted array searched by binary search (a prefix that extends another is
 * dropped: the shorter matches all it would), and the ranges of each CIDR prefix are merged and
 * sorted (IPv4 as one {@code long}, IPv6 as two), searched by binary search. Instances are
 * immutable; {@link #with} and {@link #without} copy, rebuilding only the part an entry touches.
 */
public final class AccessList {
  /** The longest entry, in characters: as long as the longest key. */
  public static final int MAX_ENTRY_LENGTH = 512;
  /** Most entries one list holds: a rule's configured entries and as many added at run time. */
  public static final int MAX_ENTRIES = 20_000;

  private static final AccessList EMPTY = new AccessList(Set.of(), Set.of(), new String[0], new Family[0], List.of());

  /** Every entry, canonical, in the order added. */
  private final Set<String> entries;
  private final Set<String> exact;
  /** Sorted; none is a prefix of another. */
  private final String[] prefixes;
  /** Sorted by prefix. */
  private final Family[] families;
  /** The CIDR entries, parsed, in the order added. */
  private final List<Cidr> cidrs;

  private AccessList(Set<String> entries, Set<String> exact, String[] prefixes, Family[] families, List<Cidr> cidrs) {
    this.entries = entries;
    this.exact = exact;
    this.prefixes = prefixes;
    this.families = families;
    this.cidrs = cidrs;
  }

  public static AccessList empty() {
    return EMPTY;
  }

  /**
   * A list of {@code entries} (duplicates, after canonical form, count once).
   *
   * @throws IllegalArgumentException naming the first bad entry and what is wrong with it, or if
   *     there are more than {@link #MAX_ENTRIES}
   */
  public static AccessList of(Collection<String> entries) {
    if (entries.size() > MAX_ENTRIES) {
      throw new IllegalArgumentException("an access list holds at most " + MAX_ENTRIES + " entries, had "
          + entries.size());
    }
    if (entries.isEmpty()) {
      return EMPTY;
    }
    Set<String> all = new LinkedHashSet<>();
    Set<String> exact = new HashSet<>();
    List<String> prefixes = new ArrayList<>();
    List<Cidr> cidrs = new ArrayList<>();
    for (String e : entries) {
      Parsed p = parse(e);
      if (!all.add(p.canonical)) {
        continue;
      }
      switch (p.kind) {
        case EXACT -> exact.add(p.canonical);
        case PREFIX -> prefixes.add(p.prefix);
        case CIDR -> cidrs.add(p.cidr);
      }
    }
    return new AccessList(Collections.unmodifiableSet(all), Collections.unmodifiableSet(exact), reduce(prefixes),
        families(cidrs), List.copyOf(cidrs));
  }

  /**
   * The canonical form of {@code entry}: as given for a key or a prefix, with the address written
   * canonically for a CIDR entry ({@code ip:2001:DB8::/32} is {@code ip:2001:db8::/32},
   * {@code ip:::ffff:10.0.0.0/104} is {@code ip:10.0.0.0/8}, {@code ip:10.0.0.1} is
   * {@code ip:10.0.0.1/32}).
   *
   * @throws IllegalArgumentException naming what is wrong with the entry
   */
  public static String checkEntry(String entry) {
    return parse(entry).canonical;
  }

  /** As {@link #checkEntry}. */
  public static String parseEntry(String entry) {
    return checkEntry(entry);
  }

  /** Whether the list matches {@code key}. */
  public boolean matches(String key) {
    return exact.contains(key) || prefixes.length > 0 && prefixMatch(key) || families.length > 0 && cidrMatch(key);
  }

  /**
   * Whether every key that {@code entry} matches is matched by this list (for a prefix entry:
   * by one of this list's prefixes).
   *
   * @throws IllegalArgumentException if {@code entry} is not a valid entry
   */
  public boolean covers(String entry) {
    Parsed p = parse(entry);
    if (p.kind == Kind.PREFIX) {
      return prefixes.length > 0 && prefixMatch(p.prefix);
    }
    // A CIDR entry is written as the network key it stands for.
    return matches(p.canonical);
  }

  /** This list with {@code entry} added (this list if it holds it already). */
  public AccessList with(String entry) {
    Parsed p = parse(entry);
    if (entries.contains(p.canonical)) {
      return this;
    }
    if (entries.size() >= MAX_ENTRIES) {
      throw new IllegalArgumentException("an access list holds at most " + MAX_ENTRIES + " entries");
    }
    Set<String> all = new LinkedHashSet<>(entries);
    all.add(p.canonical);
    all = Collections.unmodifiableSet(all);
    switch (p.kind) {
      case EXACT -> {
        Set<String> ex = new HashSet<>(exact);
        ex.add(p.canonical);
        return new AccessList(all, Collections.unmodifiableSet(ex), prefixes, families, cidrs);
      }
      case PREFIX -> {
        return new AccessList(all, exact, reduce(prefixEntries(all)), families, cidrs);
      }
      default -> {
        List<Cidr> cs = new ArrayList<>(cidrs);
        cs.add(p.cidr);
        return new AccessList(all, exact, prefixes, families(cs), List.copyOf(cs));
      }
    }
  }

  /** This list without {@code entry} (this list if it does not hold it). */
  public AccessList without(String entry) {
    Parsed p = parse(entry);
    if (!entries.contains(p.canonical)) {
      return this;
    }
    Set<String> all = new LinkedHashSet<>(entries);
    all.remove(p.canonical);
    if (all.isEmpty()) {
      return EMPTY;
    }
    all = Collections.unmodifiableSet(all);
    switch (p.kind) {
      case EXACT -> {
        Set<String> ex = new HashSet<>(exact);
        ex.remove(p.canonical);
        return new AccessList(all, Collections.unmodifiableSet(ex), prefixes, families, cidrs);
      }
      case PREFIX -> {
        return new AccessList(all, exact, reduce(prefixEntries(all)), families, cidrs);
      }
      default -> {
        List<Cidr> cs = new ArrayList<>(cidrs);
        cs.removeIf(c -> c.canonical.equals(p.canonical));
        return new AccessList(all, exact, prefixes, families(cs), List.copyOf(cs));
      }
    }
  }

  /** The entries, canonical, in the order added. */
  public Set<String> entries() {
    return entries;
  }

  public int size() {
    return entries.size();
  }

  public boolean isEmpty() {
    return entries.isEmpty();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof AccessList a && a.entries.equals(entries);
  }

  @Override
  public int hashCode() {
    return entries.hashCode();
  }

  @Override
  public String toString() {
    return "AccessList" + entries;
  }

  // ---- lookups

  private boolean prefixMatch(String key) {
    // The greatest prefix ≤ key is the only one that can be a prefix of it: any other prefix p of
    // the key lies below it, and everything between p and the key starts with p, so extends it.
    int i = Arrays.binarySearch(prefixes, key);
    if (i >= 0) {
      return true;
    }
    int at = -i - 2;
    return at >= 0 && key.startsWith(prefixes[at]);
  }

  private boolean cidrMatch(String key) {
    int lo = 0;
    int hi = families.length - 1;
    int at = -1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (families[mid].prefix.compareTo(key) <= 0) {
        at = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    // Every family whose prefix starts the key lies on the chain of shorter prefixes of the
    // greatest one ≤ key (see prefixMatch).
    while (at >= 0 && !key.startsWith(families[at].prefix)) {
      at = families[at].parent;
    }
    for (; at >= 0; at = families[at].parent) {
      if (families[at].matchesRest(key)) {
        return true;
      }
    }
    return false;
  }

  // ---- parsing

  private enum Kind { EXACT, PREFIX, CIDR }

  private record Parsed(Kind kind, String canonical, String prefix, Cidr cidr) {}

  /**
   * A CIDR entry: {@code prefix} and a range, IPv4 ({@code v4}, 0 to 2^32−1) or IPv6 (the 128-bit
   * {@code hi}:{@code lo} values).
   */
  private record Cidr(String canonical, String prefix, boolean v4, long startHi, long startLo, long endHi,
      long endLo) {}

  private static Parsed parse(String entry) {
    if (entry == null || entry.isEmpty()) {
      throw new IllegalArgumentException("empty entry");
    }
    if (entry.length() > MAX_ENTRY_LENGTH) {
      throw new IllegalArgumentException("entry longer than " + MAX_ENTRY_LENGTH + " characters");
    }
    for (int i = 0; i < entry.length(); i++) {
      char c = entry.charAt(i);
      if (Character.isISOControl(c)) {
        throw new IllegalArgumentException("entry '" + show(entry) + "' has a control character (U+"
            + String.format("%04X", (int) c) + ") at index " + i);
      }
      if (Character.isHighSurrogate(c) && i + 1 < entry.length() && Character.isLowSurrogate(entry.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        throw new IllegalArgumentException("entry '" + show(entry) + "' has a lone surrogate at index " + i
            + "; no valid key could match it");
      }
    }
    int star = entry.indexOf('*');
    if (star >= 0) {
      if (star != entry.length() - 1) {
        throw new IllegalArgumentException("entry '" + entry + "' has a '*' before its end; an entry is a key, a prefix"
            + " followed by one '*' at the end, or a prefix followed by a CIDR range");
      }
      if (entry.length() == 1) {
        throw new IllegalArgumentException("entry '*' matches every key; give a key, a prefix followed by '*' (user:*),"
            + " or a prefix followed by a CIDR range (ip:10.0.0.0/8)");
      }
      String prefix = entry.substring(0, star);
      return new Parsed(Kind.PREFIX, entry, prefix, null);
    }
    int slash = entry.lastIndexOf('/');
    String lengthText = slash < 0 ? null : entry.substring(slash + 1);
    boolean lengthShaped = lengthText != null && lengthText.chars().allMatch(c -> c >= '0' && c <= '9');
    String before = lengthShaped ? entry.substring(0, slash) : entry;
    int addressAt = addressStart(before);
    if (addressAt < 0) {
      if (lengthShaped && looksLikeAddress(before)) {
        throw new IllegalArgumentException("entry '" + entry + "' ends in a CIDR length ('/" + lengthText
            + "') but no IPv4 or IPv6 address comes before it");
      }
      return new Parsed(Kind.EXACT, entry, null, null);
    }
    String prefix = before.substring(0, addressAt);
    String addressText = before.substring(addressAt);
    byte[] a = IpAddresses.parse(addressText);
    boolean writtenV4 = addressText.indexOf(':') < 0;
    int max = writtenV4 ? 32 : 128;
    int length;
    if (!lengthShaped) {
      length = max;
    } else if (lengthText.isEmpty()) {
      throw new IllegalArgumentException("entry '" + entry + "' has no CIDR prefix length after the '/'");
    } else if (lengthText.length() > 3 || Integer.parseInt(lengthText) > max) {
      throw new IllegalArgumentException("CIDR prefix /" + lengthText + " is longer than " + max + " bits for "
          + (writtenV4 ? "IPv4" : "IPv6") + " (entry '" + entry + "')");
    } else if (lengthText.length() > 1 && lengthText.charAt(0) == '0') {
      throw new IllegalArgumentException("entry '" + entry + "': write the CIDR prefix length without leading zeros");
    } else {
      length = Integer.parseInt(lengthText);
    }
    // In the 128-bit space, an IPv4 address is IPv4-mapped.
    int bits = writtenV4 ? length + 96 : length;
    byte[] network = a.clone();
    IpAddresses.mask(network, 0, bits);
    if (!Arrays.equals(network, a)) {
      throw new IllegalArgumentException("entry '" + entry + "' has address bits set beyond its /" + length
          + " prefix; the network is " + prefix + canonicalNetwork(network, bits));
    }
    String canonical = prefix + canonicalNetwork(network, bits);
    if (!writtenV4 && addressStart(canonical.substring(0, canonical.lastIndexOf('/'))) != prefix.length()) {
      // "x:1:" and 2001:db8:0:0:0:0:0:1 read back from x:1:2001:db8::1 as "x:" and 1:2001:db8::1.
      throw new IllegalArgumentException("entry '" + entry + "' is ambiguous: the end of its prefix '" + prefix
          + "' reads as the start of the IPv6 address; end the prefix with a letter or a separator after a letter"
          + " (ip6:, addr-)");
    }
    long hi = word(network, 0);
    long lo = word(network, 8);
    long endHi = bits >= 64 ? hi : hi | lowMask(64 - bits);
    long endLo = bits >= 64 ? lo | lowMask(128 - bits) : -1L;
    if (bits >= 96 && IpAddresses.isIpv4(network)) {
      // Within ::ffff:0:0/96: an IPv4 range.
      return new Parsed(Kind.CIDR, canonical, prefix,
          new Cidr(canonical, prefix, true, 0, lo & 0xFFFF_FFFFL, 0, endLo & 0xFFFF_FFFFL));
    }
    return new Parsed(Kind.CIDR, canonical, prefix, new Cidr(canonical, prefix, false, hi, lo, endHi, endLo));
  }

  /** The network as an entry writes it: IPv4 (and IPv4-mapped) in dotted form. */
  private static String canonicalNetwork(byte[] network, int bits) {
    if (bits >= 96 && IpAddresses.isIpv4(network)) {
      return IpAddresses.format(network) + "/" + (bits - 96);
    }
    return IpAddresses.format(network) + "/" + bits;
  }

  /**
   * Where the address ending {@code s} starts, or -1: the longest ending that reads as an address
   * and starts {@code s} or follows a separator (not a letter or digit: {@code ip6:} before
   * {@code 2001:db8::}, not {@code ip} before {@code 6:2001:db8::}).
   */
  private static int addressStart(String s) {
    for (int i = Math.max(runStart(s), s.length() - 45); i < s.length(); i++) {
      if ((i == 0 || !Character.isLetterOrDigit(s.charAt(i - 1))) && IpAddresses.parse(s.substring(i)) != null) {
        return i;
      }
    }
    return -1;
  }

  /** Whether {@code s} ends with what was probably meant as an address (digits and dots, or colons). */
  private static boolean looksLikeAddress(String s) {
    String run = s.substring(runStart(s));
    int colons = 0;
    for (int i = 0; i < run.length(); i++) {
      char c = run.charAt(i);
      if (c == ':') {
        colons++;
      } else if (c == '.' && i > 0 && run.charAt(i - 1) >= '0' && run.charAt(i - 1) <= '9') {
        return true;
      }
    }
    return colons >= 2;
  }

  /** The start of the run of address characters ending {@code s}. */
  private static int runStart(String s) {
    int i = s.length();
    while (i > 0 && addressChar(s.charAt(i - 1))) {
      i--;
    }
    return i;
  }

  private static boolean addressChar(char c) {
    return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == ':' || c == '.';
  }

  private static String show(String entry) {
    StringBuilder sb = new StringBuilder();
    entry.codePoints().limit(64).forEach(c -> {
      if (Character.isISOControl(c) || Character.isSurrogate((char) c) && Character.charCount(c) == 1) {
        sb.append('?');
      } else {
        sb.appendCodePoint(c);
      }
    });
    return entry.codePointCount(0, entry.length()) > 64 ? sb + "..." : sb.toString();
  }

  private static long word(byte[] a, int from) {
    long v = 0;
    for (int i = from; i < from + 8; i++) {
      v = v << 8 | a[i] & 0xff;
    }
    return v;
  }

  /** A long with its low {@code n} bits set, 0 ≤ n ≤ 64. */
  private static long lowMask(int n) {
    return n >= 64 ? -1L : n <= 0 ? 0 : (1L << n) - 1;
  }

  private static List<String> prefixEntries(Set<String> entries) {
    List<String> out = new ArrayList<>();
    for (String e : entries) {
      if (e.endsWith("*")) {
        out.add(e.substring(0, e.length() - 1));
      }
    }
    return out;
  }

  /** The prefixes sorted, without those that extend another (the shorter matches all they would). */
  private static String[] reduce(List<String> prefixes) {
    String[] sorted = prefixes.toArray(new String[0]);
    Arrays.sort(sorted);
    List<String> out = new ArrayList<>();
    for (String p : sorted) {
      if (out.isEmpty() || !p.startsWith(out.get(out.size() - 1))) {
        out.add(p);
      }
    }
    return out.toArray(new String[0]);
  }

  private static Family[] families(List<Cidr> cidrs) {
    Map<String, List<Cidr>> byPrefix = new LinkedHashMap<>();
    for (Cidr c : cidrs) {
      byPrefix.computeIfAbsent(c.prefix, p -> new ArrayList<>()).add(c);
    }
    String[] names = byPrefix.keySet().toArray(new String[0]);
    Arrays.sort(names);
    Family[] out = new Family[names.length];
    int[] stack = new int[names.length];
    int depth = 0;
    for (int i = 0; i < names.length; i++) {
      while (depth > 0 && !names[i].startsWith(names[stack[depth - 1]])) {
        depth--;
      }
      out[i] = new Family(names[i], depth == 0 ? -1 : stack[depth - 1], byPrefix.get(names[i]));
      stack[depth++] = i;
    }
    return out;
  }

  // ---- one prefix's ranges

  private static final long MAPPED_LO_START = 0x0000_FFFF_0000_0000L;
  private static final long MAPPED_LO_END = 0x0000_FFFF_FFFF_FFFFL;
  private static final long V4_MAX = 0xFFFF_FFFFL;

  private static final class Family {
    final String prefix;
    /** The family whose prefix is the longest proper prefix of this one's, or -1. */
    final int parent;
    /** IPv4 ranges, merged: v4Start[i]..v4End[i], sorted. */
    final long[] v4Start;
    final long[] v4End;
    /** IPv6 ranges, merged, sorted as unsigned 128-bit values. */
    final long[] v6StartHi;
    final long[] v6StartLo;
    final long[] v6EndHi;
    final long[] v6EndLo;

    Family(String prefix, int parent, List<Cidr> cidrs) {
      this.prefix = prefix;
      this.parent = parent;
      List<long[]> v4 = new ArrayList<>();
      List<long[]> v6 = new ArrayList<>();
      for (Cidr c : cidrs) {
        if (c.v4) {
          v4.add(new long[] {c.startLo, c.endLo});
        } else {
          v6.add(new long[] {c.startHi, c.startLo, c.endHi, c.endLo});
          // An IPv6 range holding all of ::ffff:0:0/96 holds every IPv4 address.
          if (compare(c.startHi, c.startLo, 0, MAPPED_LO_START) <= 0 && compare(c.endHi, c.endLo, 0, MAPPED_LO_END) >= 0) {
            v4.add(new long[] {0, V4_MAX});
          }
        }
      }
      v4.sort((x, y) -> Long.compare(x[0], y[0]));
      List<long[]> m4 = new ArrayList<>();
      for (long[] r : v4) {
        long[] last = m4.isEmpty() ? null : m4.get(m4.size() - 1);
        if (last != null && r[0] <= last[1] + 1) {
          last[1] = Math.max(last[1], r[1]);
        } else {
          m4.add(r.clone());
        }
      }
      v4Start = m4.stream().mapToLong(r -> r[0]).toArray();
      v4End = m4.stream().mapToLong(r -> r[1]).toArray();
      v6.sort((x, y) -> compare(x[0], x[1], y[0], y[1]));
      List<long[]> m6 = new ArrayList<>();
      for (long[] r : v6) {
        long[] last = m6.isEmpty() ? null : m6.get(m6.size() - 1);
        if (last != null && adjoins(last, r)) {
          if (compare(r[2], r[3], last[2], last[3]) > 0) {
            last[2] = r[2];
            last[3] = r[3];
          }
        } else {
          m6.add(r.clone());
        }
      }
      v6StartHi = m6.stream().mapToLong(r -> r[0]).toArray();
      v6StartLo = m6.stream().mapToLong(r -> r[1]).toArray();
      v6EndHi = m6.stream().mapToLong(r -> r[2]).toArray();
      v6EndLo = m6.stream().mapToLong(r -> r[3]).toArray();
    }

    /** Whether range {@code r} starts at most one past the end of {@code last}. */
    private static boolean adjoins(long[] last, long[] r) {
      if (last[2] == -1L && last[3] == -1L) {
        return true;
      }
      long nextLo = last[3] + 1;
      long nextHi = nextLo == 0 ? last[2] + 1 : last[2];
      return compare(r[0], r[1], nextHi, nextLo) <= 0;
    }

    /** Whether the key, which starts with this prefix, continues with an address or network in range. */
    boolean matchesRest(String key) {
      int from = prefix.length();
      if (from >= key.length()) {
        return false;
      }
      char c = key.charAt(from);
      if (!addressChar(c) || c == '.') {
        return false;
      }
      String rest = key.substring(from);
      int slash = rest.indexOf('/');
      String addressText = slash < 0 ? rest : rest.substring(0, slash);
      byte[] a = IpAddresses.parse(addressText);
      if (a == null) {
        return false;
      }
      boolean writtenV4 = addressText.indexOf(':') < 0;
      int bits;
      if (slash < 0) {
        bits = 128;
      } else {
        int length = length(rest, slash + 1, writtenV4 ? 32 : 128);
        if (length < 0) {
          return false;
        }
        bits = writtenV4 ? length + 96 : length;
      }
      long hi = word(a, 0);
      long lo = word(a, 8);
      if (bits >= 96 && IpAddresses.isIpv4(a)) {
        long x = lo & V4_MAX;
        long mask = V4_MAX & ~lowMask(128 - bits);
        return inV4(x & mask, (x & mask) | lowMask(128 - bits));
      }
      long startHi = bits >= 64 ? hi : hi & ~lowMask(64 - bits);
      long startLo = bits >= 64 ? lo & ~lowMask(128 - bits) : 0;
      long endHi = bits >= 64 ? hi : hi | lowMask(64 - bits);
      long endLo = bits >= 64 ? lo | lowMask(128 - bits) : -1L;
      return inV6(startHi, startLo, endHi, endLo) || acrossMapped(startHi, startLo, endHi, endLo);
    }

    /**
     * Whether a range holding all of ::ffff:0:0/96 lies in the union of this prefix's ranges when
     * no one IPv6 range holds it: the IPv4 ranges are kept apart, so the IPv6 ones must hold what
     * lies on either side of the IPv4-mapped addresses, and the IPv4 ones all of those.
     */
    private boolean acrossMapped(long startHi, long startLo, long endHi, long endLo) {
      if (compare(startHi, startLo, 0, MAPPED_LO_START) > 0 || compare(endHi, endLo, 0, MAPPED_LO_END) < 0
          || !inV4(0, V4_MAX)) {
        return false;
      }
      boolean below = startLo == MAPPED_LO_START || inV6(startHi, startLo, 0, MAPPED_LO_START - 1);
      boolean above = endHi == 0 && endLo == MAPPED_LO_END || inV6(0, MAPPED_LO_END + 1, endHi, endLo);
      return below && above;
    }

    /** The prefix length written at {@code from} to the end, 0 to {@code max}, or -1. */
    private static int length(String s, int from, int max) {
      int n = s.length() - from;
      if (n < 1 || n > 3 || n > 1 && s.charAt(from) == '0') {
        return -1;
      }
      int v = 0;
      for (int i = from; i < s.length(); i++) {
        char c = s.charAt(i);
        if (c < '0' || c > '9') {
          return -1;
        }
        v = v * 10 + (c - '0');
      }
      return v <= max ? v : -1;
    }

    private boolean inV4(long start, long end) {
      int lo = 0;
      int hi = v4Start.length - 1;
      int at = -1;
      while (lo <= hi) {
        int mid = (lo + hi) >>> 1;
        if (v4Start[mid] <= start) {
          at = mid;
          lo = mid + 1;
        } else {
          hi = mid - 1;
        }
      }
      return at >= 0 && end <= v4End[at];
    }

    private boolean inV6(long startHi, long startLo, long endHi, long endLo) {
      int lo = 0;
      int hi = v6StartHi.length - 1;
      int at = -1;
      while (lo <= hi) {
        int mid = (lo + hi) >>> 1;
        if (compare(v6StartHi[mid], v6StartLo[mid], startHi, startLo) <= 0) {
          at = mid;
          lo = mid + 1;
        } else {
          hi = mid - 1;
        }
      }
      return at >= 0 && compare(endHi, endLo, v6EndHi[at], v6EndLo[at]) <= 0;
    }
  }

  /** Compares two unsigned 128-bit values. */
  private static int compare(long aHi, long aLo, long bHi, long bLo) {
    int c = Long.compareUnsigned(aHi, bHi);
    return c != 0 ? c : Long.compareUnsigned(aLo, bLo);
  }
}
