package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.redis.internal.Redaction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RedactionTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      redis://user:s3cret@h:6379/0                | redis://user:***@h:6379/0
      redis://:s3cret@h:6379                      | redis://:***@h:6379
      rediss://s3cret@h                           | rediss://***@h
      redis://h:6379                              | redis://h:6379
      redis://u:p@ss@h                            | redis://u:***@h
      redis-sentinel://:s3cret@h1:26379,h2#master | redis-sentinel://:***@h1:26379,h2#master
      redis-cluster://bob:s3cret@n1:7000,n2:7001  | redis-cluster://bob:***@n1:7000,n2:7001
      admin:s3cret@h:6379                         | admin:***@h:6379
      h:6379                                      | h:6379
      """)
  void aUriShowsEverythingButItsPassword(String uri, String shown) {
    assertThat(Redaction.uri(uri)).isEqualTo(shown);
  }

  @Test
  void aMessageLosesThePasswordAsWrittenAndDecoded() {
    assertThat(Redaction.message("AUTH p%40ss p@ss failed", "redis://u:p%40ss@h")).isEqualTo("AUTH *** *** failed");
    assertThat(Redaction.message("AUTH s3cret failed", "rediss://s3cret@h")).isEqualTo("AUTH *** failed");
    assertThat(Redaction.message("connection refused", "redis://h")).isEqualTo("connection refused");
  }

  /** Lettuce's own IllegalArgumentException quotes the whole URI it was given. */
  @Test
  void aUriTheClientCannotParseIsRefusedWithoutItsPassword() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Endpoint.parse("redis://u:s3cret@[bad"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'redis://u:***@[bad'")
        .message().doesNotContain("s3cret");
  }

  @Test
  void endpointErrorsShowTheUriInTheSameForm() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Endpoint.parse("http://s3cret@h:1"))
        .hasMessageContaining("'http://***@h:1'");
  }
}
