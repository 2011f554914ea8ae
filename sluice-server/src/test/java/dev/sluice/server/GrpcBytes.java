package dev.sluice.server;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;

/** gRPC's length-prefixed frames, and the ways a broken client or proxy damages them, for fuzzing. */
public final class GrpcBytes {
  private GrpcBytes() {}

  /** {@code message} in one frame: the flags byte, the length (4 bytes, big-endian), the message. */
  public static byte[] frame(int flags, byte[] message) {
    return ByteBuffer.allocate(5 + message.length).put((byte) flags).putInt(message.length).put(message).array();
  }

  /**
   * {@code frame} changed one way, chosen at random: bytes flipped, cut short, sent twice, the
   * frame's flags or length wrong, or a byte inserted into the message.
   */
  public static byte[] damaged(Random r, byte[] frame) {
    byte[] m = frame;
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
      case 3 -> m[r.nextInt(5)] = (byte) r.nextInt(256);
      default -> {
        int at = Math.min(5 + r.nextInt(Math.max(1, m.length - 5)), m.length);
        byte[] longer = Arrays.copyOf(m, m.length + 1);
        System.arraycopy(m, at, longer, at + 1, m.length - at);
        longer[at] = (byte) r.nextInt(256);
        m = longer;
      }
    }
    return m;
  }
}
