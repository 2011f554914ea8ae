package dev.sluice.server.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Random bytes sent as a {@code ShouldRateLimit} call, bare or in a well-formed frame, are never
 * an {@code INTERNAL} or {@code UNKNOWN} failure and never name a library class.
 */
class GrpcBadBytesProperties {
  @BeforeContainer
  static void start() throws Exception {
    EnvoyMalformedRequestTest.start();
  }

  @AfterContainer
  static void stop() throws Exception {
    EnvoyMalformedRequestTest.stop();
  }

  @Property(tries = 200)
  void randomBytesAreNeverAnInternalError(@ForAll("bytes") byte[] bytes, @ForAll boolean framed) {
    Status s = EnvoyMalformedRequestTest.call(framed ? EnvoyMalformedRequestTest.frame(0, bytes) : bytes);
    assertThat(s.getCode()).as(String.valueOf(s)).isNotIn(Status.Code.INTERNAL, Status.Code.UNKNOWN);
    if (s.getCode() != Status.Code.OK) {
      assertThat(s.getDescription()).isNotBlank().doesNotContain("com.", "io.", "java.", "Exception", "armeria",
          "Armeria");
    }
  }

  @Provide
  Arbitrary<byte[]> bytes() {
    return Arbitraries.bytes().array(byte[].class).ofMaxSize(64);
  }
}
