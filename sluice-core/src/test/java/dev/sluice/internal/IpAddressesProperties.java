package dev.sluice.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.util.Arrays;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
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
}
