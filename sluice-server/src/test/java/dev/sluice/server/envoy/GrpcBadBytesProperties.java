package dev.sluice.server.envoy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testing.FuzzCases;
import io.grpc.Status;
import java.util.Arrays;
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
    return Arbitraries.randomValue(r -> {
      byte[] m = EnvoyMalformedRequestTest.frame(0, GrpcMessageFuzzProperties.request(r).toByteArray());
      switch (r.nextInt(5)) {
        case 0 -> {
          for (int i = 0, n = 1 + r.nextInt(4); i < n; i++) {
            m[r.nextInt(m.length)] = (byte) r.nextInt(256);
          }
        }
        case 1 -> m = Arrays.copyOf(m, r.nextInt(m.length));
        case 2 -> {
          byte[] twice = Arrays.copyOf(m, m.length * 2);
          System.arraycopy(m, 0, twice, m.length, m.length);
          m = twice;
        }
        case 3 -> m[1 + r.nextInt(4)] = (byte) r.nextInt(256);
        default -> {
          int at = 5 + r.nextInt(Math.max(1, m.length - 5));
          byte[] longer = Arrays.copyOf(m, m.length + 1);
          System.arraycopy(m, Math.min(at, m.length), longer, Math.min(at, m.length) + 1, m.length - Math.min(at, m.length));
          longer[Math.min(at, m.length)] = (byte) r.nextInt(256);
          m = longer;
        }
      }
      return m;
    });
  }

  @Provide
  Arbitrary<byte[]> bytes() {
    return Arbitraries.bytes().array(byte[].class).ofMaxSize(64);
  }
}
