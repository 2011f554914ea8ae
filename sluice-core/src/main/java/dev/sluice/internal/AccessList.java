package dev.sluice.internal;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The entries of one access list of a rule ({@link dev.sluice.ListKind}): exact keys (a hash
 * set), key prefixes ({@code prefix*}) and CIDR ranges after a key prefix ({@code ip:10.0.0.0/8},
 * {@code ip:2001:db8::/32}), matching keys made of that prefix and an address inside. Immutable.
 */
public final class AccessList {
  /** Most entries one list may hold. */
  public static final int MAX_ENTRIES = 20_000;
  /** Longest entry, in chars. */
  public static final int MAX_ENTRY_CHARS = 1024;

  private static final AccessList EMPTY = new AccessList(Set.of(), new String[0], List.of());

  private record Range(String prefix, byte[] network, int bits) {}

  private final Set<String> exact;
  private final String[] prefixes;
  private final List<Range> ranges;

  private AccessList(Set<String> exact, String[] prefixes, List<Range> ranges) {
    this.exact = exact;
    this.prefixes = prefixes;
    this.ranges = ranges;
  }

  public static AccessList empty() {
    return EMPTY;
  }

  /** @throws IllegalArgumentException naming the first bad entry, or if there are too many */
  public static AccessList of(Collection<String> entries) {
    if (entries.isEmpty()) {
      return EMPTY;
    }
    if (entries.size() > MAX_ENTRIES) {
      throw new IllegalArgumentException("an access list holds at most " + MAX_ENTRIES + " entries, had "
          + entries.size());
    }
    Set<String> exact = new HashSet<>();
    List<String> prefixes = new ArrayList<>();
    List<Range> ranges = new ArrayList<>();
    for (String e : entries) {
      parseEntry(e);
      Range r = range(e);
      if (r != null) {
        ranges.add(r);
      } else if (e.endsWith("*")) {
        prefixes.add(e.substring(0, e.length() - 1));
      } else {
        exact.add(e);
      }
    }
    return new AccessList(Set.copyOf(exact), prefixes.toArray(new String[0]), List.copyOf(ranges));
  }

  /**
   * Checks one entry.
   *
   * @return the entry
   * @throws IllegalArgumentException naming what is wrong with it
   */
  public static String parseEntry(String entry) {
    if (entry == null || entry.isEmpty()) {
      throw new IllegalArgumentException("a list entry must not be empty");
    }
    if (entry.length() > MAX_ENTRY_CHARS) {
      throw new IllegalArgumentException("a list entry is at most " + MAX_ENTRY_CHARS + " characters, was "
          + entry.length());
    }
    if (entry.equals("*")) {
      throw new IllegalArgumentException("a list entry '*' would match every key; list the rule's keys instead");
    }
    if (entry.indexOf('*') >= 0 && entry.indexOf('*') != entry.length() - 1) {
      throw new IllegalArgumentException("list entry '" + entry + "': '*' may only end an entry");
    }
    int slash = entry.lastIndexOf('/');
    if (slash > 0 && looksLikeAddress(entry.substring(addressStart(entry, slash), slash))) {
      range(entry); // throws for a bad range
    }
    return entry;
  }

  /** Whether {@code key} is on the list. */
  public boolean matches(String key) {
    if (exact.contains(key)) {
      return true;
    }
    for (String p : prefixes) {
      if (key.startsWith(p)) {
        return true;
      }
    }
    if (!ranges.isEmpty()) {
      for (Range r : ranges) {
        if (key.startsWith(r.prefix)) {
          byte[] a = address(key.substring(r.prefix.length()));
          if (a != null && inside(a, r)) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /** The same as {@link #matches}: an allow list allows the keys it matches. */
  public boolean allows(String key) {
    return matches(key);
  }

  public boolean isEmpty() {
    return this == EMPTY || exact.isEmpty() && prefixes.length == 0 && ranges.isEmpty();
  }

  public int size() {
    return exact.size() + prefixes.length + ranges.size();
  }

  private static boolean inside(byte[] a, Range r) {
    int full = r.bits / 8;
    for (int i = 0; i < full; i++) {
      if (a[i] != r.network[i]) {
        return false;
      }
    }
    int rest = r.bits % 8;
    if (rest == 0) {
      return true;
    }
    int mask = (0xff << (8 - rest)) & 0xff;
    return (a[full] & mask) == (r.network[full] & mask);
  }

  /** Where the address of a CIDR entry ending at {@code slash} starts: after the last char that is none of an address's. */
  private static int addressStart(String entry, int slash) {
    int i = slash;
    while (i > 0 && isAddressChar(entry.charAt(i - 1))) {
      i--;
    }
    return i;
  }

  private static boolean isAddressChar(char c) {
    return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == ':' || c == '.';
  }

  private static boolean looksLikeAddress(String s) {
    return s.indexOf(':') >= 0 || s.chars().filter(c -> c == '.').count() == 3;
  }

  /** The range of a CIDR entry, null if the entry is not one. */
  private static Range range(String entry) {
    int slash = entry.lastIndexOf('/');
    if (slash <= 0 || entry.endsWith("*")) {
      return null;
    }
    int start = addressStart(entry, slash);
    String text = entry.substring(start, slash);
    if (!looksLikeAddress(text)) {
      return null;
    }
    // An IPv6 address may begin with hex letters that belong to the prefix ("ip:ab::1"): take the
    // longest tail that parses.
    byte[] a = null;
    while (start < slash && (a = address(entry.substring(start, slash))) == null) {
      start++;
    }
    if (a == null) {
      throw new IllegalArgumentException("list entry '" + entry + "': '" + text + "' is not an IP address");
    }
    String bitsText = entry.substring(slash + 1);
    int bits;
    try {
      bits = Integer.parseInt(bitsText);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("list entry '" + entry + "': the prefix length '" + bitsText
          + "' is not a number");
    }
    boolean v4 = entry.substring(start, slash).indexOf(':') < 0;
    int max = v4 ? 32 : 128;
    if (bits < 0 || bits > max) {
      throw new IllegalArgumentException("list entry '" + entry + "': the prefix length must be 0 to " + max
          + ", was " + bits);
    }
    return new Range(entry.substring(0, start), a, v4 ? bits + 96 : bits);
  }

  /** An IPv4 or IPv6 literal as 16 bytes (IPv4 mapped), or null. Never a name lookup. */
  private static byte[] address(String s) {
    if (s.isEmpty() || s.length() > 45) {
      return null;
    }
    for (int i = 0; i < s.length(); i++) {
      if (!isAddressChar(s.charAt(i))) {
        return null;
      }
    }
    boolean v6 = s.indexOf(':') >= 0;
    if (!v6) {
      String[] parts = s.split("\\.", -1);
      if (parts.length != 4) {
        return null;
      }
      for (String p : parts) {
        if (p.isEmpty() || p.length() > 3 || (p.length() > 1 && p.charAt(0) == '0') || !p.chars().allMatch(Character::isDigit)
            || Integer.parseInt(p) > 255) {
          return null;
        }
      }
    }
    try {
      byte[] raw = InetAddress.getByName(s).getAddress(); // a literal: no lookup is made
      if (raw.length == 16) {
        return raw;
      }
      byte[] out = new byte[16];
      out[10] = (byte) 0xff;
      out[11] = (byte) 0xff;
      System.arraycopy(raw, 0, out, 12, 4);
      return out;
    } catch (UnknownHostException e) {
      return null;
    }
  }
}
