package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;

class EndpointTest {

  @Test
  void standaloneUriKeepsUserPasswordAndDatabaseButDescribesNoPassword() {
    Endpoint e = Endpoint.parse("redis://alice:pw@10.0.0.5:6380/2");
    assertThat(e.topology()).isEqualTo(Endpoint.Topology.STANDALONE);
    RedisURI u = e.uris().get(0);
    assertThat(u.getHost()).isEqualTo("10.0.0.5");
    assertThat(u.getPort()).isEqualTo(6380);
    assertThat(u.getDatabase()).isEqualTo(2);
    assertThat(e.description()).isEqualTo("redis://alice@10.0.0.5:6380/2");
  }

  @Test
  void tlsSchemeTurnsOnTls() {
    Endpoint e = Endpoint.parse("rediss://:pw@cache.example:6390");
    assertThat(e.uris().get(0).isSsl()).isTrue();
    assertThat(e.description()).isEqualTo("rediss://cache.example:6390").doesNotContain("pw");
  }

  @Test
  void sentinelUriAcceptsBothFormsWithAndWithoutDatabase() {
    for (String uri : new String[] {"redis-sentinel://h1:26379,h2:26380#mymaster", "redis-sentinel://h1:26379,h2:26380/0#mymaster"}) {
      Endpoint e = Endpoint.parse(uri);
      assertThat(e.topology()).isEqualTo(Endpoint.Topology.SENTINEL);
      RedisURI u = e.uris().get(0);
      assertThat(u.getSentinelMasterId()).isEqualTo("mymaster");
      assertThat(u.getSentinels()).extracting(RedisURI::getPort).containsExactly(26379, 26380);
      assertThat(e.description()).isEqualTo("redis-sentinel://h1:26379,h2:26380#mymaster");
    }
  }

  @Test
  void sentinelUriWithoutMasterNameIsRejected() {
    assertThatThrownBy(() -> Endpoint.parse("redis-sentinel://h1:26379"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names no master");
  }

  @Test
  void clusterUriGivesEverySeedTheSameCredentials() {
    Endpoint e = Endpoint.parse("redis-cluster://bob:secret@n1:7000,n2:7001,n3");
    assertThat(e.topology()).isEqualTo(Endpoint.Topology.CLUSTER);
    assertThat(e.uris()).extracting(RedisURI::getHost).containsExactly("n1", "n2", "n3");
    assertThat(e.uris()).extracting(RedisURI::getPort).containsExactly(7000, 7001, 6379);
    assertThat(e.uris()).allSatisfy(u -> {
      var credentials = u.getCredentialsProvider().resolveCredentials().block();
      assertThat(credentials.getUsername()).isEqualTo("bob");
      assertThat(new String(credentials.getPassword())).isEqualTo("secret");
    });
    assertThat(e.description()).isEqualTo("redis-cluster://bob@n1:7000,n2:7001,n3:6379").doesNotContain("secret");
    assertThat(Endpoint.parse("rediss-cluster://n1:7000").uris().get(0).isSsl()).isTrue();
  }

  @Test
  void unknownSchemeIsRejectedNamingTheAcceptedFormsWithoutThePassword() {
    assertThatThrownBy(() -> Endpoint.parse("http://user:topsecret@h:1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown scheme 'http'")
        .hasMessageContaining("redis-sentinel://")
        .hasMessageNotContaining("topsecret");
    assertThatThrownBy(() -> Endpoint.parse("localhost:6379")).hasMessageContaining("no scheme");
  }
}
