package dev.sluice.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The access list matches exactly what a naive reading of its entries matches: each entry tried
 * in turn, addresses as 128-bit integers, and a network key inside the union of the ranges of its
 * prefix. Entries and keys are drawn from a few prefixes and from small clusters of IPv4 and
 * IPv6 addresses, so that ranges overlap, nest, adjoin and hold the keys.
 */
class AccessListProperties {
  /** "x:" and "x:1:" both start "x:1::5", which only the shorter reads as an address. */
  private static final String[] PREFIXES = {"", "ip:", "ip:v6:", "n-", "x:", "x:1:"};
  private static final BigInteger MAPPED = BigInteger.valueOf(0xFFFF).shiftLeft(32);
  private static final BigInteger V6_BASE = new BigInteger("20010db8000000000000000000000000", 16);

  /** A key or entry's address part: a 128-bit network, its length, and how it is written. */
  private record Net(BigInteger start, int bits, String text) {
    BigInteger end() {
      return start.add(BigInteger.ONE.shiftLeft(128 - bits)).subtract(BigInteger.ONE);
    }
  }

  private record Entry(String text, String prefix, Net net, boolean isPrefix) {}

  private record Key(String text, String prefix, Net net) {}

  @Property(tries = 400)
  void matchesAsANaiveReadingOfTheEntries(@ForAll long seed) {
    Random r = new Random(seed);
    List<Entry> entries = new ArrayList<>();
    int n = r.nextInt(40);
    for (int i = 0; i < n; i++) {
      entries.add(entry(r));
    }
    AccessList list = AccessList.of(entries.stream().map(Entry::text).toList());
    for (int i = 0; i < 300; i++) {
      Key k = key(r, entries);
      assertThat(list.matches(k.text)).as("%s in %s", k.text, list).isEqualTo(oracle(entries, k));
    }
  }

  @Property(tries = 100)
  void aListChangedEntryByEntryMatchesAsOneBuiltWhole(@ForAll long seed) {
    Random r = new Random(seed);
    List<Entry> entries = new ArrayList<>();
    AccessList list = AccessList.empty();
    for (int step = 0; step < 40; step++) {
      if (!entries.isEmpty() && r.nextInt(3) == 0) {
        Entry gone = entries.remove(r.nextInt(entries.size()));
        list = list.without(gone.text);
        // The same entry may have been drawn twice.
        String canonical = AccessList.checkEntry(gone.text);
        entries.removeIf(e -> AccessList.checkEntry(e.text).equals(canonical));
      } else {
        Entry e = entry(r);
        entries.add(e);
        list = list.with(e.text);
      }
    }
    AccessList whole = AccessList.of(entries.stream().map(Entry::text).toList());
    assertThat(list.entries()).containsExactlyInAnyOrderElementsOf(whole.entries());
    for (int i = 0; i < 300; i++) {
      Key k = key(r, entries);
      boolean expected = oracle(entries, k);
      assertThat(list.matches(k.text)).as(k.text).isEqualTo(expected);
      assertThat(whole.matches(k.text)).as(k.text).isEqualTo(expected);
    }
  }

  private static boolean oracle(List<Entry> entries, Key k) {
    Set<String> prefixes = new LinkedHashSet<>();
    for (Entry e : entries) {
      if (e.net == null) {
        if (e.isPrefix ? k.text.startsWith(e.prefix) : k.text.equals(e.text)) {
          return true;
        }
      } else if (k.text.startsWith(e.prefix)) {
        prefixes.add(e.prefix);
      }
    }
    for (String p : prefixes) {
      Net key = read(k.text.substring(p.length()));
      if (key == null) {
        continue;
      }
      List<Net> ranges = entries.stream().filter(e -> e.net != null && e.prefix.equals(p)).map(Entry::net).toList();
      // The key's range lies in the union of the ranges: sweep from its start.
      BigInteger at = key.start;
      boolean moved = true;
      while (moved) {
        moved = false;
        for (Net n : ranges) {
          if (n.start.compareTo(at) <= 0 && n.end().compareTo(at) >= 0) {
            at = n.end().add(BigInteger.ONE);
            moved = true;
            if (at.compareTo(key.end()) > 0) {
              return true;
            }
          }
        }
      }
    }
    return false;
  }

  /** An address or network as a 128-bit range (IPv4 as IPv4-mapped), or null. */
  private static Net read(String text) {
    int slash = text.indexOf('/');
    String address = slash < 0 ? text : text.substring(0, slash);
    byte[] a = IpAddresses.parse(address);
    if (a == null) {
      return null;
    }
    boolean v4 = !address.contains(":");
    int bits = 128;
    if (slash >= 0) {
      String len = text.substring(slash + 1);
      if (!len.matches("0|[1-9][0-9]{0,2}") || Integer.parseInt(len) > (v4 ? 32 : 128)) {
        return null;
      }
      bits = Integer.parseInt(len) + (v4 ? 96 : 0);
    }
    BigInteger mask = BigInteger.ONE.shiftLeft(128).subtract(BigInteger.ONE.shiftLeft(128 - bits));
    return new Net(new BigInteger(1, a).and(mask), bits, text);
  }

  private static Entry entry(Random r) {
    int kind = r.nextInt(10);
    if (kind == 0) {
      String key = "user:" + r.nextInt(20);
      return new Entry(key, null, null, false);
    }
    if (kind == 1) {
      String p = "user:" + (r.nextBoolean() ? "" : r.nextInt(3));
      return new Entry(p + "*", p, null, true);
    }
    String prefix = PREFIXES[r.nextInt(PREFIXES.length)];
    Net net = network(r, true);
    while (prefix.equals("x:1:") && net.text.matches("[0-9A-Fa-f].*:.*")) {
      net = network(r, true); // "x:1:" then 2001:db8::1 would be ambiguous; such an entry is refused
    }
    return new Entry(prefix + net.text, prefix, net, false);
  }

  private static Key key(Random r, List<Entry> entries) {
    int kind = r.nextInt(10);
    if (kind == 0) {
      return new Key("user:" + r.nextInt(25), null, null);
    }
    if (kind == 1 && !entries.isEmpty()) {
      // A key written as an entry is.
      Entry e = entries.get(r.nextInt(entries.size()));
      return new Key(e.text, e.prefix, e.net);
    }
    String prefix = PREFIXES[r.nextInt(PREFIXES.length)];
    Net net = network(r, false);
    return new Key(prefix + net.text, prefix, net);
  }

  /** An address or network in one of the clusters, written in one of its spellings. */
  private static Net network(Random r, boolean forEntry) {
    boolean v4 = r.nextInt(3) > 0;
    boolean network = forEntry ? r.nextInt(5) > 0 : r.nextInt(3) == 0;
    if (v4) {
      // 10.0.x.y with few distinct values, or anywhere.
      long a = r.nextInt(8) == 0 ? r.nextLong() & 0xFFFF_FFFFL : 0x0A00_0000L | r.nextInt(4) << 8 | r.nextInt(256);
      int len = network ? (r.nextInt(4) == 0 ? r.nextInt(33) : 22 + r.nextInt(11)) : 32;
      long masked = len == 0 ? 0 : a & (0xFFFF_FFFFL << (32 - len)) & 0xFFFF_FFFFL;
      String dotted = (masked >> 24 & 255) + "." + (masked >> 16 & 255) + "." + (masked >> 8 & 255) + "." + (masked & 255);
      BigInteger start = MAPPED.or(BigInteger.valueOf(masked));
      boolean mapped = r.nextInt(4) == 0;
      String text = mapped ? "::ffff:" + dotted : dotted;
      if (network) {
        text += "/" + (mapped ? len + 96 : len);
      }
      return new Net(start, len + 96, text);
    }
    BigInteger a;
    int pick = r.nextInt(10);
    if (pick == 0) {
      a = BigInteger.ZERO; // ::, whose short networks hold the IPv4-mapped addresses
    } else if (pick == 1) {
      a = new BigInteger(128, r);
    } else if (pick == 2) {
      a = BigInteger.ONE.shiftLeft(112).or(BigInteger.valueOf(r.nextInt(16))); // 1::x, after "x:" too
    } else {
      a = V6_BASE.or(BigInteger.valueOf(r.nextInt(4)).shiftLeft(64)).or(BigInteger.valueOf(r.nextInt(256)));
    }
    int len = network ? (r.nextInt(3) == 0 ? r.nextInt(129) : 56 + r.nextInt(73)) : 128;
    BigInteger mask = BigInteger.ONE.shiftLeft(128).subtract(BigInteger.ONE.shiftLeft(128 - len));
    BigInteger start = a.and(mask);
    byte[] bytes = bytes(start);
    String text = r.nextBoolean() ? IpAddresses.format(bytes) : longForm(bytes);
    if (IpAddresses.isIpv4(bytes) && !text.contains(":")) {
      text = "::ffff:" + text;
    }
    if (network) {
      text += "/" + len;
    }
    return new Net(start, len, text);
  }

  private static byte[] bytes(BigInteger v) {
    byte[] raw = v.toByteArray();
    byte[] out = new byte[16];
    int n = Math.min(16, raw.length);
    System.arraycopy(raw, raw.length - n, out, 16 - n, n);
    return out;
  }

  /** Eight groups, upper case, none left out. */
  private static String longForm(byte[] a) {
    StringBuilder sb = new StringBuilder();
    for (int g = 0; g < 8; g++) {
      sb.append(g == 0 ? "" : ":").append(Integer.toHexString((a[2 * g] & 0xff) << 8 | a[2 * g + 1] & 0xff)
          .toUpperCase(java.util.Locale.ROOT));
    }
    return sb.toString();
  }

  @Property(tries = 300)
  void theCanonicalFormOfAnEntryMatchesWhatTheEntryMatches(@ForAll long seed) throws UnknownHostException {
    Random r = new Random(seed);
    Entry e = entry(r);
    AccessList given = AccessList.of(List.of(e.text));
    AccessList canonical = AccessList.of(List.of(AccessList.checkEntry(e.text)));
    assertThat(canonical.entries()).isEqualTo(given.entries());
    Set<String> keys = new LinkedHashSet<>();
    for (int i = 0; i < 100; i++) {
      keys.add(key(r, List.of(e)).text);
    }
    for (String k : keys) {
      assertThat(canonical.matches(k)).as(k).isEqualTo(given.matches(k));
    }
    if (e.net != null && e.net.bits == 128) {
      // A one-address entry matches the address however the JDK spells it.
      String spelled = InetAddress.getByAddress(bytes(e.net.start)).getHostAddress();
      assertThat(given.matches(e.prefix + spelled)).as(e.prefix + spelled).isTrue();
    }
  }
}
