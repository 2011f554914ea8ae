package dev.sluice.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AccessListTest {

  private static AccessList list(String... entries) {
    return AccessList.of(List.of(entries));
  }

  @Test
  void exactEntriesMatchOnlyThatKey() {
    AccessList l = list("user:42", "all");
    assertThat(l.matches("user:42")).isTrue();
    assertThat(l.matches("all")).isTrue();
    assertThat(l.matches("user:4")).isFalse();
    assertThat(l.matches("user:420")).isFalse();
    assertThat(l.matches("")).isFalse();
  }

  @Test
  void prefixEntriesMatchEveryKeyStartingWithThePrefix() {
    AccessList l = list("partner:*", "user:1*", "user:12*", "zz*");
    assertThat(l.matches("partner:")).isTrue();
    assertThat(l.matches("partner:acme")).isTrue();
    assertThat(l.matches("user:1")).isTrue();
    assertThat(l.matches("user:19")).isTrue();
    assertThat(l.matches("user:123")).isTrue();
    assertThat(l.matches("user:2")).isFalse();
    assertThat(l.matches("partne")).isFalse();
    assertThat(l.matches("a")).isFalse();
    assertThat(l.matches("zz")).isTrue();
    assertThat(l.matches("zzz")).isTrue();
    assertThat(l.matches("z")).isFalse();
  }

  @Test
  void anIpv4RangeMatchesAddressesAndNetworksInsideIt() {
    AccessList l = list("ip:10.0.0.0/8", "ip:192.168.1.0/24");
    assertThat(l.matches("ip:10.0.0.0")).isTrue();
    assertThat(l.matches("ip:10.255.255.255")).isTrue();
    assertThat(l.matches("ip:11.0.0.0")).isFalse();
    assertThat(l.matches("ip:9.255.255.255")).isFalse();
    assertThat(l.matches("ip:192.168.1.77")).isTrue();
    assertThat(l.matches("ip:192.168.2.1")).isFalse();
    // Networks, as grouped IP attributes write them: inside, or reaching outside.
    assertThat(l.matches("ip:10.1.2.0/24")).isTrue();
    assertThat(l.matches("ip:10.0.0.0/8")).isTrue();
    assertThat(l.matches("ip:10.0.0.0/7")).isFalse();
    assertThat(l.matches("ip:192.168.0.0/16")).isFalse();
    // Not an address after the prefix, or another prefix.
    assertThat(l.matches("ip:")).isFalse();
    assertThat(l.matches("ip:10.0.0")).isFalse();
    assertThat(l.matches("ip:10.0.0.1/33")).isFalse();
    assertThat(l.matches("ip:10.0.0.1/")).isFalse();
    assertThat(l.matches("ip:localhost")).isFalse();
    assertThat(l.matches("host:10.0.0.1")).isFalse();
    assertThat(l.matches("10.0.0.1")).isFalse();
  }

  @Test
  void anIpv6RangeMatchesAddressesAndNetworksInsideItInAnySpelling() {
    AccessList l = list("ip:2001:db8::/32");
    assertThat(l.matches("ip:2001:db8::1")).isTrue();
    assertThat(l.matches("ip:2001:DB8:ffff:ffff:ffff:ffff:ffff:ffff")).isTrue();
    assertThat(l.matches("ip:2001:0db8:0:0:0:0:0:1")).isTrue();
    assertThat(l.matches("ip:2001:db9::")).isFalse();
    assertThat(l.matches("ip:2001:db7:ffff::")).isFalse();
    assertThat(l.matches("ip:2001:db8:1::/64")).isTrue();
    assertThat(l.matches("ip:2001:db8::/31")).isFalse();
    assertThat(l.matches("ip:10.0.0.1")).isFalse();
  }

  @Test
  void ipv4MappedAddressesCountAsIpv4OnBothSides() {
    AccessList v4 = list("ip:10.0.0.0/8");
    assertThat(v4.matches("ip:::ffff:10.1.2.3")).isTrue();
    assertThat(v4.matches("ip:::FFFF:a01:203")).isTrue();
    assertThat(v4.matches("ip:::ffff:10.1.2.0/120")).isTrue();
    assertThat(v4.matches("ip:::ffff:11.1.2.3")).isFalse();

    AccessList mapped = list("ip:::ffff:10.0.0.0/104");
    assertThat(mapped.entries()).containsExactly("ip:10.0.0.0/8");
    assertThat(mapped.matches("ip:10.200.0.1")).isTrue();
    assertThat(mapped.matches("ip:11.0.0.1")).isFalse();
  }

  @Test
  void anIpv6RangeHoldingAllMappedAddressesHoldsEveryIpv4Address() {
    AccessList all = list("ip:::/0");
    assertThat(all.matches("ip:1.2.3.4")).isTrue();
    assertThat(all.matches("ip:0.0.0.0/0")).isTrue();
    assertThat(all.matches("ip:2001:db8::1")).isTrue();
    assertThat(all.matches("ip:::/0")).isTrue();

    AccessList low = list("ip:::/64");
    assertThat(low.matches("ip:255.255.255.255")).isTrue();
    assertThat(low.matches("ip:1::")).isFalse();
  }

  @Test
  void anAddressWithoutALengthIsItsOneAddressRange() {
    AccessList l = list("ip:2001:DB8::1", "ip:10.0.0.1");
    assertThat(l.entries()).containsExactly("ip:2001:db8::1/128", "ip:10.0.0.1/32");
    assertThat(l.matches("ip:2001:db8::1")).isTrue();
    assertThat(l.matches("ip:2001:db8:0::1")).isTrue();
    assertThat(l.matches("ip:2001:db8::2")).isFalse();
    assertThat(l.matches("ip:::ffff:10.0.0.1")).isTrue();
    assertThat(l.matches("ip:10.0.0.1/32")).isTrue();
    assertThat(l.matches("ip:10.0.0.0/31")).isFalse();
  }

  @Test
  void adjacentRangesMergeSoANetworkSpanningThemMatches() {
    AccessList l = list("ip:10.0.0.0/25", "ip:10.0.0.128/25", "ip:2001:db8::/33", "ip:2001:db8:8000::/33");
    assertThat(l.matches("ip:10.0.0.0/24")).isTrue();
    assertThat(l.matches("ip:10.0.0.0/23")).isFalse();
    assertThat(l.matches("ip:2001:db8::/32")).isTrue();
  }

  @Test
  void nestedPrefixFamiliesAreEachTried() {
    AccessList l = list("ip:10.0.0.0/8", "ip:v6:2001:db8::/32", "i:1.0.0.0/8", "1.2.3.0/24");
    assertThat(l.matches("ip:10.1.1.1")).isTrue();
    assertThat(l.matches("ip:v6:2001:db8::5")).isTrue();
    assertThat(l.matches("ip:v6:10.1.1.1")).isFalse();
    assertThat(l.matches("i:1.2.3.4")).isTrue();
    assertThat(l.matches("1.2.3.4")).isTrue();
    assertThat(l.matches("ip:1.2.3.4")).isFalse();
    assertThat(l.matches("ip:w")).isFalse();

    // "x:1::5" starts with both "x:" and "x:1:"; only after the shorter is there an address.
    AccessList nested = list("x:1::/16", "x:1:10.0.0.0/8");
    assertThat(nested.matches("x:1::5")).isTrue();
    assertThat(nested.matches("x:1:10.0.0.5")).isTrue();
    assertThat(nested.matches("x:1:11.0.0.5")).isFalse();
  }

  @Test
  void anEntryWhosePrefixWouldReadAsPartOfItsIpv6AddressIsRefused() {
    assertThatThrownBy(() -> AccessList.checkEntry("x:1:2001:DB8:0:0:0:0:0:1"))
        .hasMessageStartingWith("entry 'x:1:2001:DB8:0:0:0:0:0:1' is ambiguous: the end of its prefix 'x:1:'");
    assertThat(AccessList.checkEntry("x:1:10.0.0.1")).isEqualTo("x:1:10.0.0.1/32");
  }

  @Test
  void theAddressIsTheLongestEndingThatReadsAsOne() {
    assertThat(AccessList.checkEntry("ip:::1")).isEqualTo("ip:::1/128");
    assertThat(AccessList.checkEntry("ip:::/0")).isEqualTo("ip:::/0");
    assertThat(AccessList.checkEntry("net-abcd::/16")).isEqualTo("net-abcd::/16");
    assertThat(AccessList.checkEntry("dead:beef:10.0.0.0/8")).isEqualTo("dead:beef:10.0.0.0/8");
    assertThat(list("dead:beef:10.0.0.0/8").matches("dead:beef:10.9.9.9")).isTrue();
    // After a separator: "ip6:" and 2001:db8::, not "ip" and 6:2001:db8::.
    assertThat(list("ip6:2001:db8::/32").matches("ip6:2001:db8::1")).isTrue();
    assertThat(list("ip6:2001:db8::1").matches("ip6:2001:db8:0::1")).isTrue();
    assertThat(AccessList.checkEntry("user:42:10.0.0.1")).isEqualTo("user:42:10.0.0.1/32");
    // An address follows a separator: without one, the entry is a key.
    assertThat(AccessList.checkEntry("x1.2.3.4")).isEqualTo("x1.2.3.4");
  }

  @Test
  void badEntriesAreRefusedNamingTheProblem() {
    assertThatThrownBy(() -> AccessList.checkEntry("")).hasMessage("empty entry");
    assertThatThrownBy(() -> AccessList.checkEntry("k".repeat(513))).hasMessage("entry longer than 512 characters");
    assertThat(AccessList.checkEntry("k".repeat(512))).hasSize(512);
    assertThatThrownBy(() -> AccessList.checkEntry("ip:10.0.0.0/33"))
        .hasMessageStartingWith("CIDR prefix /33 is longer than 32 bits for IPv4");
    assertThatThrownBy(() -> AccessList.checkEntry("ip:2001:db8::/129"))
        .hasMessageStartingWith("CIDR prefix /129 is longer than 128 bits for IPv6");
    assertThatThrownBy(() -> AccessList.checkEntry("ip:10.0.0.0/99999999999"))
        .hasMessageStartingWith("CIDR prefix /99999999999 is longer than 32 bits");
    assertThatThrownBy(() -> AccessList.checkEntry("ip:10.0.0.1/8"))
        .hasMessage("entry 'ip:10.0.0.1/8' has address bits set beyond its /8 prefix; the network is ip:10.0.0.0/8");
    assertThatThrownBy(() -> AccessList.checkEntry("ip:10.0.0.0/"))
        .hasMessage("entry 'ip:10.0.0.0/' has no CIDR prefix length after the '/'");
    assertThatThrownBy(() -> AccessList.checkEntry("ip:10.0.0.0/08"))
        .hasMessageContaining("without leading zeros");
    assertThatThrownBy(() -> AccessList.checkEntry("ip:10.0.0/8"))
        .hasMessage("entry 'ip:10.0.0/8' ends in a CIDR length ('/8') but no IPv4 or IPv6 address comes before it");
    assertThatThrownBy(() -> AccessList.checkEntry("ip:010.0.0.0/8"))
        .hasMessageContaining("no IPv4 or IPv6 address comes before it");
    assertThatThrownBy(() -> AccessList.checkEntry("*")).hasMessageStartingWith("entry '*' matches every key");
    assertThatThrownBy(() -> AccessList.checkEntry("us*er")).hasMessageContaining("has a '*' before its end");
    assertThatThrownBy(() -> AccessList.checkEntry("a\nb")).hasMessageContaining("control character (U+000A)");
    assertThatThrownBy(() -> AccessList.checkEntry("a\uD800")).hasMessageContaining("lone surrogate");
    assertThatThrownBy(() -> list("ok", "")).hasMessage("empty entry");
  }

  @Test
  void keysWithASlashThatAreNotRangesStayExactKeys() {
    AccessList l = list("path:/v1/users", "page/2", "order:7/3");
    assertThat(l.matches("path:/v1/users")).isTrue();
    assertThat(l.matches("page/2")).isTrue();
    assertThat(l.matches("order:7/3")).isTrue();
    assertThat(l.entries()).containsExactly("path:/v1/users", "page/2", "order:7/3");
  }

  @Test
  void withAndWithoutCopyAndLeaveTheOriginalAsItWas() {
    AccessList a = list("user:1", "p:*", "ip:10.0.0.0/8");
    AccessList b = a.with("user:2").with("q:*").with("ip:2001:db8::/32");
    assertThat(b.matches("user:2")).isTrue();
    assertThat(b.matches("q:x")).isTrue();
    assertThat(b.matches("ip:2001:db8::9")).isTrue();
    assertThat(a.matches("user:2")).isFalse();
    assertThat(a.matches("q:x")).isFalse();
    assertThat(a.matches("ip:2001:db8::9")).isFalse();
    assertThat(a.with("user:1")).isSameAs(a);
    assertThat(a.with("ip:10.0.0.0/8")).isSameAs(a);
    assertThat(a.without("nope")).isSameAs(a);

    AccessList c = b.without("ip:10.0.0.0/8").without("p:*").without("user:1");
    assertThat(c.matches("ip:10.1.1.1")).isFalse();
    assertThat(c.matches("p:x")).isFalse();
    assertThat(c.matches("user:1")).isFalse();
    assertThat(c.matches("ip:2001:db8::9")).isTrue();
    assertThat(c.entries()).containsExactly("user:2", "q:*", "ip:2001:db8::/32");
    // Removal by any spelling of the entry.
    assertThat(c.without("ip:2001:DB8::/32").matches("ip:2001:db8::9")).isFalse();
    assertThat(list("a").without("a")).isEqualTo(AccessList.empty());
  }

  @Test
  void aShorterPrefixRemovedLeavesTheLongerOneInForce() {
    AccessList l = list("user:*", "user:1*").without("user:*");
    assertThat(l.matches("user:12")).isTrue();
    assertThat(l.matches("user:2")).isFalse();
  }

  @Test
  void coversTellsAnEntryWhoseKeysAllMatch() {
    AccessList l = list("user:*", "ip:10.0.0.0/8", "k");
    assertThat(l.covers("user:1*")).isTrue();
    assertThat(l.covers("user:1")).isTrue();
    assertThat(l.covers("use*")).isFalse();
    assertThat(l.covers("ip:10.1.0.0/16")).isTrue();
    assertThat(l.covers("ip:10.1.2.3")).isTrue();
    assertThat(l.covers("ip:::ffff:10.1.2.3")).isTrue();
    assertThat(l.covers("ip:0.0.0.0/0")).isFalse();
    assertThat(l.covers("k")).isTrue();
    assertThat(l.covers("j")).isFalse();
  }

  @Test
  void aListHoldsAtMostItsBound() {
    List<String> many = new ArrayList<>();
    for (int i = 0; i <= AccessList.MAX_ENTRIES; i++) {
      many.add("k" + i);
    }
    assertThatThrownBy(() -> AccessList.of(many)).hasMessageContaining("at most " + AccessList.MAX_ENTRIES);
    AccessList full = AccessList.of(many.subList(0, AccessList.MAX_ENTRIES));
    assertThat(full.size()).isEqualTo(AccessList.MAX_ENTRIES);
    assertThatThrownBy(() -> full.with("another")).hasMessageContaining("at most " + AccessList.MAX_ENTRIES);
  }

  @Test
  void aKeyStartingWithNoRangePrefixIsLookedUpWithoutAllocating() {
    AccessList l = list("ip:10.0.0.0/8", "ip6:2001:db8::/32", "user:*", "k1", "k2");
    com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory
        .getThreadMXBean();
    String[] keys = {"user:42", "acct:7", "k3", "zzzz", "host:10.0.0.1"};
    boolean any = false;
    for (int i = 0; i < 20_000; i++) {
      any |= l.matches(keys[i % keys.length]);
    }
    long before = mx.getCurrentThreadAllocatedBytes();
    for (int i = 0; i < 100_000; i++) {
      any |= l.matches(keys[i % keys.length]);
    }
    long allocated = mx.getCurrentThreadAllocatedBytes() - before;
    assertThat(any).isTrue();
    // Well under one byte per lookup: what the measuring itself costs.
    assertThat(allocated).isLessThan(10_000);
  }
  @Test
  void anEntryWithACharacterBeyondTheBasicPlaneIsAKeyLikeAnyOther() {
    AccessList l = list("user:\uD83D\uDE00", "team:\uD83D\uDE00*");
    assertThat(l.matches("user:\uD83D\uDE00")).isTrue();
    assertThat(l.matches("team:\uD83D\uDE00:7")).isTrue();
    assertThat(l.matches("user:\uD83D")).isFalse();
    assertThat(l.entries()).containsExactly("user:\uD83D\uDE00", "team:\uD83D\uDE00*");
  }

  @Test
  void aHalfOfASurrogatePairAloneIsRefusedAtItsIndex() {
    assertThatThrownBy(() -> AccessList.checkEntry("user:\uD83D"))
        .hasMessage("entry 'user:?' has a lone surrogate at index 5; no valid key could match it");
    assertThatThrownBy(() -> AccessList.checkEntry("user:\uDE00\uD83D"))
        .hasMessage("entry 'user:??' has a lone surrogate at index 5; no valid key could match it");
    assertThatThrownBy(() -> AccessList.checkEntry("\uD83D\uDE00:\uD83Dx"))
        .hasMessage("entry '\uD83D\uDE00:?x' has a lone surrogate at index 3; no valid key could match it");
  }

  @Test
  void anErrorShowsControlCharactersAsQuestionMarksAndEverythingElseAsWritten() {
    assertThatThrownBy(() -> AccessList.checkEntry("a\u0000b\uD83D\uDE00"))
        .hasMessage("entry 'a?b\uD83D\uDE00' has a control character (U+0000) at index 1");
  }

  @Test
  void aSlashFollowedByOtherThanDigitsOrByDigitsAfterNoAddressIsPartOfAKey() {
    // None of these reads as an address before the '/': exact keys, not errors.
    AccessList l = list("ip:10.0.0.1/x", "user:42/7", "x.5/8", "build:v2.release/5");
    assertThat(l.entries()).containsExactly("ip:10.0.0.1/x", "user:42/7", "x.5/8", "build:v2.release/5");
    assertThat(l.matches("ip:10.0.0.1/x")).isTrue();
    assertThat(l.matches("ip:10.0.0.1")).isFalse();
    assertThat(l.matches("user:42/7")).isTrue();
    assertThat(l.matches("build:v2.release/5")).isTrue();
  }

  @Test
  void whatWasMeantAsAnAddressBeforeACidrLengthButIsNotOneIsRefused() {
    for (String entry : List.of("ip:9.9.9/8", "ip:10./8", "ip:fe80:/10")) {
      assertThatThrownBy(() -> AccessList.checkEntry(entry)).as(entry)
          .hasMessageContaining("but no IPv4 or IPv6 address comes before it");
    }
  }

  @Test
  void theWholeIpv4SpaceIsWrittenSlashZeroHoweverItIsSpelled() {
    assertThat(AccessList.checkEntry("ip:0.0.0.0/0")).isEqualTo("ip:0.0.0.0/0");
    assertThat(AccessList.checkEntry("ip:::ffff:0:0/96")).isEqualTo("ip:0.0.0.0/0");
    assertThat(AccessList.parseEntry("ip:::FFFF:0:0/96")).isEqualTo("ip:0.0.0.0/0");
    assertThat(list("ip:0.0.0.0/0").matches("ip:255.255.255.255")).isTrue();
    assertThat(list("ip:0.0.0.0/0").matches("ip:::1")).isFalse();
  }

  @Test
  void aSlash64RangeHoldsEveryAddressOfItsNetwork() {
    AccessList l = list("ip6:2001:db8:1:2::/64");
    assertThat(l.matches("ip6:2001:db8:1:2:ffff:ffff:ffff:ffff")).isTrue();
    assertThat(l.matches("ip6:2001:db8:1:2::/64")).isTrue();
    assertThat(l.matches("ip6:2001:db8:1:3::")).isFalse();
    assertThat(l.matches("ip6:2001:db8:1:2::/63")).isFalse();
  }

  @Test
  void listsAreEqualWhenTheirEntriesAre() {
    AccessList a = list("user:1", "ip:10.0.0.0/8");
    AccessList same = list("user:1", "ip:10.0.0.0/8", "user:1");
    assertThat(a).isEqualTo(same).hasSameHashCodeAs(same);
    assertThat(a).isNotEqualTo(list("user:1")).isNotEqualTo(list("user:2", "ip:10.0.0.0/8")).isNotEqualTo("user:1");
    assertThat(a.isEmpty()).isFalse();
    assertThat(AccessList.of(List.of()).isEmpty()).isTrue();
    assertThat(a.without("user:1").without("ip:10.0.0.0/8").isEmpty()).isTrue();
  }
  @Test
  void aNetworkAcrossIpv6RangesAndTheIpv4SpaceMatchesTheirUnion() {
    // ::fffe:0:0/95 is ::fffe:0:0/96, then every IPv4-mapped address.
    assertThat(list("ip:0.0.0.0/0", "ip:::fffe:0:0/96").matches("ip:::fffe:0:0/95")).isTrue();
    assertThat(list("ip:0.0.0.0/0").matches("ip:::fffe:0:0/95")).isFalse();
    assertThat(list("ip:::fffe:0:0/96").matches("ip:::fffe:0:0/95")).isFalse();
    assertThat(list("ip:128.0.0.0/1", "ip:::fffe:0:0/96").matches("ip:::fffe:0:0/95")).isFalse();

    // ::/79: below the mapped addresses (/81 to /96, each half of what is left), the IPv4 space,
    // and ::1:0:0:0/80 above.
    List<String> entries = new ArrayList<>(List.of("ip:0.0.0.0/0", "ip:::1:0:0:0/80"));
    for (int len = 81; len <= 96; len++) {
      long start = (1L << 48) - (1L << (129 - len));
      entries.add(String.format("ip:0:0:0:0:%x:%x:%x:%x/%d", start >>> 48 & 0xffff, start >>> 32 & 0xffff,
          start >>> 16 & 0xffff, start & 0xffff, len));
    }
    assertThat(AccessList.of(entries).matches("ip:::/79")).isTrue();
    assertThat(AccessList.of(entries.subList(1, entries.size())).matches("ip:::/79")).isFalse();
    assertThat(AccessList.of(entries).without("ip:::1:0:0:0/80").matches("ip:::/79")).isFalse();
    assertThat(AccessList.of(entries).without("ip:::8000:0:0/82").matches("ip:::/79")).isFalse();
    assertThat(AccessList.of(entries).matches("ip:::/78")).isFalse();
  }
  @Test
  void aNetworkKeyWithHostBitsSetIsReadAsItsNetwork() {
    // 10.0.0.4 to 10.0.0.255, which holds 10.0.0.5 but not 10.0.0.0/24.
    AccessList v4 = list("ip:10.0.0.4/30", "ip:10.0.0.8/29", "ip:10.0.0.16/28", "ip:10.0.0.32/27", "ip:10.0.0.64/26",
        "ip:10.0.0.128/25");
    assertThat(v4.matches("ip:10.0.0.5")).isTrue();
    assertThat(v4.matches("ip:10.0.0.5/24")).isFalse();
    assertThat(v4.with("ip:10.0.0.0/30").matches("ip:10.0.0.5/24")).isTrue();
    AccessList v6 = list("ip:2001:8000::/17");
    assertThat(v6.matches("ip:2001:8000::/17")).isTrue();
    assertThat(v6.matches("ip:2001:8000::/16")).isFalse();
  }

  @Test
  void aKeyWithABadLengthAfterItsAddressIsNoNetwork() {
    AccessList all = list("ip:0.0.0.0/0", "ip:::/0");
    assertThat(all.matches("ip:10.0.0.0/8")).isTrue();
    for (String key : List.of("ip:10.0.0.0/08", "ip:10.0.0.0/33", "ip:10.0.0.0/1x", "ip:10.0.0.0/1000", "ip:::/129")) {
      assertThat(all.matches(key)).as(key).isFalse();
    }
  }

  @Test
  void aRangeEndingAtTheLastAddressTakesInTheRangesAfterIt() {
    assertThat(list("ip:8000::/1", "ip:ffff::/32").matches("ip:ffff:1::/32")).isTrue();
    assertThat(list("ip:8000::/1", "ip:ffff::/32").matches("ip:8000::/1")).isTrue();
  }

  @Test
  void anErrorShortensOnlyAnEntryOfMoreThan64Characters() {
    assertThatThrownBy(() -> AccessList.checkEntry("a".repeat(63) + "\n"))
        .hasMessageStartingWith("entry '" + "a".repeat(63) + "?' has a control character");
    assertThatThrownBy(() -> AccessList.checkEntry("a".repeat(64) + "\n"))
        .hasMessageStartingWith("entry '" + "a".repeat(64) + "...' has a control character");
    assertThat(list("a", "b:*")).hasToString("AccessList[a, b:*]");
  }
}
