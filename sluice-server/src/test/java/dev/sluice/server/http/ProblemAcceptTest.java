package dev.sluice.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Which Accept values ask the service for problems rather than its JSON (RFC 9110, 12.5.1). */
class ProblemAcceptTest {
  @Test
  void problemsWinOnlyWhenRankedAboveJsonOrNamedMoreSpecifically() {
    assertThat(ProblemJson.preferred("application/problem+json")).isTrue();
    assertThat(ProblemJson.preferred(" application/problem+json ; charset=utf-8")).isTrue();
    assertThat(ProblemJson.preferred("application/problem+json, */*")).isTrue();
    assertThat(ProblemJson.preferred("application/problem+json, application/*")).isTrue();
    assertThat(ProblemJson.preferred("application/json;q=0.9, application/problem+json")).isTrue();
    assertThat(ProblemJson.preferred("text/html, application/problem+json;q=0.2")).isTrue();
    assertThat(ProblemJson.preferred("application/problem+json;Q=0.5")).isTrue();

    assertThat(ProblemJson.preferred((String) null)).isFalse();
    assertThat(ProblemJson.preferred("")).isFalse();
    assertThat(ProblemJson.preferred("*/*")).isFalse();
    assertThat(ProblemJson.preferred("application/*")).isFalse();
    assertThat(ProblemJson.preferred("application/json")).isFalse();
    assertThat(ProblemJson.preferred("application/json, application/problem+json")).isFalse();
    assertThat(ProblemJson.preferred("application/problem+json;q=0.5, application/json")).isFalse();
    assertThat(ProblemJson.preferred("application/problem+json;q=0")).isFalse();
    assertThat(ProblemJson.preferred("application/problem+json;q=0, */*")).isFalse();
    assertThat(ProblemJson.preferred("application/problem+xml")).isFalse();
    // A range whose quality is not a number from 0 to 1 is left out, as if not sent.
    assertThat(ProblemJson.preferred("application/problem+json;q=high")).isFalse();
    assertThat(ProblemJson.preferred("application/problem+json;q=2")).isFalse();
    assertThat(ProblemJson.preferred("/problem+json")).isFalse();
    assertThat(ProblemJson.preferred("application/problem+json, " + "x".repeat(5000))).isFalse();
  }
}
