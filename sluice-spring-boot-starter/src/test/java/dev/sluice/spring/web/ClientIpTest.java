package dev.sluice.spring.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The client address behind trusted proxies: a table of cases, and what no header can change. */
class ClientIpTest {
  private static final ClientIp PROXIES = ClientIp.of(List.of("10.0.0.0/8", "2001:db8:ffff::/48", "192.0.2.7"));

  @ParameterizedTest(name = "peer {0}, Forwarded [{1}], X-Forwarded-For [{2}] -> {3}")
  @CsvSource(delimiter = '|', quoteCharacter = '\'', nullValues = "-", textBlock = """
      203.0.113.5 | -                                   | 198.51.100.1                | 203.0.113.5
      203.0.113.5 | for=198.51.100.1                    | -                           | 203.0.113.5
      10.1.2.3    | -                                   | -                           | 10.1.2.3
      10.1.2.3    | -                                   | 198.51.100.1                | 198.51.100.1
      10.1.2.3    | -                                   | 6.6.6.6, 198.51.100.1       | 198.51.100.1
      10.1.2.3    | -                                   | 198.51.100.1, 10.9.9.9      | 198.51.100.1
      10.1.2.3    | -                                   | 10.8.8.8, 10.9.9.9          | 10.8.8.8
      10.1.2.3    | -                                   | unknown                     | 10.1.2.3
      10.1.2.3    | -                                   | 198.51.100.1, junk, 10.9.9.9 | 10.9.9.9
      10.1.2.3    | -                                   | 198.51.100.1:4711           | 198.51.100.1
      192.0.2.7   | -                                   | 198.51.100.1                | 198.51.100.1
      192.0.2.8   | -                                   | 198.51.100.1                | 192.0.2.8
      10.1.2.3    | for=198.51.100.1;proto=https        | 6.6.6.6                     | 198.51.100.1
      10.1.2.3    | for="[2001:db8:cafe::17]:4711"      | -                           | 2001:db8:cafe:0:0:0:0:17
      10.1.2.3    | for=6.6.6.6, for=10.2.2.2           | -                           | 6.6.6.6
      10.1.2.3    | by=10.0.0.1                         | 198.51.100.1                | 10.1.2.3
      2001:db8:ffff::1 | -                              | 198.51.100.1                | 198.51.100.1
      2001:db8:fffe::1 | -                              | 198.51.100.1                | 2001:db8:fffe:0:0:0:0:1
      """)
  void resolves(String peer, String forwarded, String xff, String client) {
    assertThat(PROXIES.resolve(peer, forwarded == null ? null : List.of(forwarded), xff == null ? null : List.of(xff)))
        .isEqualTo(client);
  }

  @Property
  void aPeerThatIsNotATrustedProxyIsTheClientWhateverItForwards(@ForAll("untrusted") String peer,
      @ForAll("hops") List<String> forwarded, @ForAll("hops") List<String> xff) {
    assertThat(PROXIES.resolve(peer, List.of(String.join(", ", forwarded.stream().map(h -> "for=" + h).toList())),
        List.of(String.join(", ", xff)))).isEqualTo(peer);
  }

  @Property
  void withNoTrustedProxyTheHeadersAreNeverRead(@ForAll("trusted") String peer, @ForAll("hops") List<String> xff) {
    assertThat(ClientIp.of(List.of()).resolve(peer, null, List.of(String.join(", ", xff)))).isEqualTo(peer);
  }

  @Property
  void theClientIsNeverATrustedProxyUnlessEveryHopIs(@ForAll("trusted") String peer, @ForAll("hops") List<String> xff) {
    String client = PROXIES.resolve(peer, null, List.of(String.join(", ", xff)));
    boolean allTrusted = xff.stream().allMatch(h -> PROXIES.isTrusted(Cidr.address(h)));
    assertThat(PROXIES.isTrusted(Cidr.address(client))).isEqualTo(allTrusted);
  }

  @Provide
  Arbitrary<String> untrusted() {
    return Arbitraries.integers().between(11, 223).list().ofSize(4)
        .map(b -> b.get(0) + "." + b.get(1) + "." + b.get(2) + "." + b.get(3));
  }

  @Provide
  Arbitrary<String> trusted() {
    return Arbitraries.integers().between(0, 255).list().ofSize(3)
        .map(b -> "10." + b.get(0) + "." + b.get(1) + "." + b.get(2));
  }

  @Provide
  Arbitrary<List<String>> hops() {
    return Arbitraries.oneOf(untrusted(), trusted()).list().ofMinSize(0).ofMaxSize(5);
  }
}
