package dev.sluice.internal.lease;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The binary layout shared by usage reports and sizes: unsigned LEB128 varints and strings as a
 * varint length then UTF-8. Reading checks everything an instance or a leader could be sent by a
 * store holding another version's bytes, or garbage: every failure is an
 * {@link IllegalArgumentException} saying what and where.
 */
final class Wire {
  private Wire() {}

  /** Appends to a growing buffer. */
  static final class Out {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);

    Out varint(long v) {
      if (v < 0) {
        throw new IllegalArgumentException("a count must not be negative, was " + v);
      }
      while ((v & ~0x7FL) != 0) {
        bytes.write((int) ((v & 0x7F) | 0x80));
        v >>>= 7;
      }
      bytes.write((int) v);
      return this;
    }

    Out string(String s) {
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      varint(b.length);
      bytes.write(b, 0, b.length);
      return this;
    }

    Out u8(int b) {
      bytes.write(b);
      return this;
    }

    Out fixed64(long v) {
      for (int i = 0; i < 8; i++) {
        bytes.write((int) (v >>> (8 * i)));
      }
      return this;
    }

    int size() {
      return bytes.size();
    }

    byte[] toByteArray() {
      return bytes.toByteArray();
    }
  }

  /** Reads what {@link Out} wrote, refusing anything else. */
  static final class In {
    private final byte[] b;
    private int at;

    In(byte[] b) {
      this.b = b;
    }

    boolean done() {
      return at == b.length;
    }

    int position() {
      return at;
    }

    int u8(String what) {
      need(1, what);
      return b[at++] & 0xFF;
    }

    long fixed64(String what) {
      long v = 0;
      for (int i = 0; i < 8; i++) {
        v |= (long) u8(what) << (8 * i);
      }
      return v;
    }

    long varint(String what) {
      long v = 0;
      for (int shift = 0; shift < 63; shift += 7) {
        int x = u8(what);
        v |= (long) (x & 0x7F) << shift;
        if ((x & 0x80) == 0) {
          if (x == 0 && shift > 0) {
            // One number, one encoding: what reads back is what was written.
            throw new IllegalArgumentException(what + " before byte " + at + " has a needless trailing zero byte");
          }
          return v;
        }
      }
      throw new IllegalArgumentException(what + " at byte " + at + " is longer than a 63-bit number");
    }

    String string(String what, int maxBytes) {
      long n = varint(what + "'s length");
      if (n > maxBytes) {
        throw new IllegalArgumentException(what + " at byte " + at + " is " + n + " bytes; at most " + maxBytes);
      }
      need((int) n, what);
      try {
        String s = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b, at, (int) n)).toString();
        at += (int) n;
        return s;
      } catch (CharacterCodingException e) {
        throw new IllegalArgumentException(what + " at byte " + at + " is not valid UTF-8");
      }
    }

    private void need(int n, String what) {
      if (b.length - at < n) {
        throw new IllegalArgumentException("truncated at byte " + at + ": " + what + " needs " + n + " more");
      }
    }
  }
}
