package dev.sluice.server.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.GrpcBytes;
import dev.sluice.testing.FuzzCases;
import io.grpc.Status;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Random bytes sent as a {@code ShouldRateLimit} call — bare, in a well-formed frame, or a valid
 * message with bytes flipped, cut or added — are never an {@code INTERNAL} or {@code UNKNOWN}
 * failure and never name a library class.
 */
@AddLifecycleHook(FuzzCases.class)
class GrpcBadBytesProperties {
  @BeforeContainer
  static void start() throws Exception {
    GrpcMessageFuzzProperties.quietProtobuf();
    EnvoyMalformedRequestTest.start();
  }

  @AfterContainer
  static void stop() throws Exception {
    EnvoyMalformedRequestTest.stop();
  }

  @Property
  @FuzzCases.Share(20)
  void randomBytesAreNeverAnInternalError(@ForAll("bytes") byte[] bytes, @ForAll boolean framed) {
    assertAnsweredPlainly(framed ? EnvoyMalformedRequestTest.frame(0, bytes) : bytes);
  }

  @Property
  @FuzzCases.Share(20)
  void aValidMessageWithBytesChangedIsNeverAnInternalError(@ForAll("mutatedMessages") byte[] frame) {
    assertAnsweredPlainly(frame);
  }

  private static void assertAnsweredPlainly(byte[] body) {
    Status s = EnvoyMalformedRequestTest.call(body);
    assertThat(s.getCode()).as(String.valueOf(s)).isNotIn(Status.Code.INTERNAL, Status.Code.UNKNOWN);
    if (s.getCode() != Status.Code.OK) {
      assertThat(s.getDescription()).isNotBlank().doesNotContain("com.", "io.", "java.", "Exception", "armeria",
          "Armeria");
    }
  }

  /**
   * Random requests (as {@link GrpcMessageFuzzProperties} makes them), framed, then changed the
   * way a broken client or proxy changes bytes: flipped, cut short, repeated, the frame's length
   * or flags wrong.
   */
  @Provide
  Arbitrary<byte[]> mutatedMessages() {
    return Arbitraries.randomValue(r -> GrpcBytes.damaged(r,
        EnvoyMalformedRequestTest.frame(0, GrpcMessageFuzzProperties.request(r).toByteArray())));
  }

  @Provide
  Arbitrary<byte[]> bytes() {
    return Arbitraries.bytes().array(byte[].class).ofMaxSize(64);
  }
}
