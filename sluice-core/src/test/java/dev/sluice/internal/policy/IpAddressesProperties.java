package dev.sluice.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Attribute;
import dev.sluice.InvalidAttributeException;
import java.net.InetAddress;
import java.util.Arrays;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** The canonical text of an address reads back as that address, and every spelling reads alike. */
class IpAddressesProperties {

  @Property(tries = 2000)
  void theCanonicalTextOfAnyAddressReadsBackAsIt(@ForAll @Size(16) byte[] address, @ForAll int zeroMask) {
    byte[] a = address.clone();
    // Runs of zero groups, so that "::" is exercised in every place.
    for (int g = 0; g < 8; g++) {
      if ((zeroMask >> g & 1) != 0) {
        a[2 * g] = 0;
        a[2 * g + 1] = 0;
      }
    }
    String text = IpAddresses.format(a);
    assertThat(IpAddresses.parse(text)).as(text).isEqualTo(a);
    assertThat(IpAddresses.format(IpAddresses.parse(text))).isEqualTo(text);
  }

  @Property(tries = 2000)
  void theFullUncompressedSpellingReadsAsTheJdkReadsIt(@ForAll @Size(16) byte[] a) throws Exception {
    StringBuilder full = new StringBuilder();
    for (int g = 0; g < 8; g++) {
      full.append(g == 0 ? "" : ":").append(String.format("%04X", (a[2 * g] & 0xff) << 8 | a[2 * g + 1] & 0xff));
    }
    byte[] parsed = IpAddresses.parse(full.toString());
    // A literal is never looked up: getByName on an IPv6 literal only parses it.
    byte[] jdk = InetAddress.getByName(full.toString()).getAddress();
    if (jdk.length == 4) {
      // The JDK turns an IPv4-mapped address into IPv4; this reader keeps 16 bytes.
      assertThat(IpAddresses.isIpv4(parsed)).isTrue();
      assertThat(Arrays.copyOfRange(parsed, 12, 16)).isEqualTo(jdk);
    } else {
      assertThat(parsed).isEqualTo(jdk);
    }
  }

  @Property(tries = 1000)
  void dottedQuadsReadAsIpv4MappedAddresses(@ForAll @Size(4) byte[] v4) {
    String text = (v4[0] & 0xff) + "." + (v4[1] & 0xff) + "." + (v4[2] & 0xff) + "." + (v4[3] & 0xff);
    byte[] a = IpAddresses.parse(text);
    assertThat(IpAddresses.isIpv4(a)).isTrue();
    assertThat(IpAddresses.format(a)).isEqualTo(text);
    assertThat(IpAddresses.parse("::ffff:" + text)).isEqualTo(a);
  }

  /**
   * An IP attribute reads a dotted quad by its own short path: the key text must be what the
   * general path (16 bytes, masked, formatted) gives, grouped or not.
   */
  @Property(tries = 2000)
  void anIpAttributesKeyTextOfADottedQuadIsTheGeneralPathsText(@ForAll @Size(4) byte[] v4,
      @ForAll @IntRange(min = -1, max = 32) int prefix) {
    String text = (v4[0] & 0xff) + "." + (v4[1] & 0xff) + "." + (v4[2] & 0xff) + "." + (v4[3] & 0xff);
    byte[] a = IpAddresses.parse(text);
    String expected;
    if (prefix < 0) {
      expected = IpAddresses.format(a);
    } else {
      IpAddresses.mask(a, 12, prefix);
      expected = IpAddresses.format(a) + "/" + prefix;
    }
    Attribute attribute = prefix < 0 ? Attribute.ip("ip") : Attribute.ip("ip", prefix, 64);
    assertThat(attribute.keyText(text)).isEqualTo(expected);
    assertThat(attribute.keyText("::ffff:" + text)).isEqualTo(expected);
  }

  /** The oracle: four decimal numbers 0-255 without leading zeros, joined by dots. */
  @Property(tries = 1000)
  void aDottedQuadIsReadIfAndOnlyIfItIsFourPlainDecimalsUpTo255(@ForAll("nearQuads") String text) {
    Attribute attribute = Attribute.ip("ip", 24, 64);
    boolean plain = text.matches("(0|[1-9][0-9]{0,2})(\\.(0|[1-9][0-9]{0,2})){3}")
        && Arrays.stream(text.split("\\.")).allMatch(p -> Integer.parseInt(p) <= 255);
    if (plain) {
      String[] p = text.split("\\.");
      assertThat(attribute.keyText(text)).isEqualTo(p[0] + "." + p[1] + "." + p[2] + ".0/24");
    } else {
      assertThatThrownBy(() -> attribute.keyText(text)).isInstanceOf(InvalidAttributeException.class);
    }
  }

  /** Dotted quads and near misses: leading zeros, parts over 255, parts missing or extra, stray characters. */
  @Provide
  Arbitrary<String> nearQuads() {
    Arbitrary<String> part = Arbitraries.oneOf(Arbitraries.integers().between(0, 300).map(String::valueOf),
        Arbitraries.of("", "00", "01", "0x1", "1a", " 1", "1 ", "-1", "1111"));
    return part.list().ofMinSize(1).ofMaxSize(5).map(ps -> String.join(".", ps));
  }
}
