package dev.sluice.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder;
import io.netty.handler.codec.http2.DefaultHttp2HeadersEncoder;
import io.netty.handler.codec.http2.Http2Headers;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One cleartext HTTP/2 connection (prior knowledge) driven frame by frame, so that a test can
 * open as many streams as it likes without a client library's own limits in the way, and read
 * the server's SETTINGS. Header blocks are coded with Netty's HPACK.
 */
final class RawHttp2 implements AutoCloseable {
  static final int REFUSED_STREAM = 0x7;
  private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final int DATA = 0;
  private static final int HEADERS = 1;
  private static final int RST_STREAM = 3;
  private static final int SETTINGS = 4;
  private static final int PING = 6;
  private static final int WINDOW_UPDATE = 8;
  private static final int END_STREAM = 0x1;
  private static final int END_HEADERS = 0x4;
  private static final int PADDED = 0x8;
  private static final int PRIORITY = 0x20;

  /** A stream's answer: its headers, body and trailers, or the code it was reset with. */
  static final class Answer {
    volatile Http2Headers headers;
    volatile Http2Headers trailers;
    final ByteArrayOutputStream body = new ByteArrayOutputStream();
    volatile int resetCode = -1;
    final CompletableFuture<Answer> done = new CompletableFuture<>();

    int status() {
      return headers == null ? -1 : Integer.parseInt(headers.status().toString());
    }

    String body() {
      synchronized (body) {
        return body.toString(StandardCharsets.UTF_8);
      }
    }

    /** gRPC's status, in the trailers or a trailers-only answer's headers; null if none. */
    String grpcStatus() {
      Http2Headers h = trailers != null ? trailers : headers;
      CharSequence s = h == null ? null : h.get("grpc-status");
      return s == null ? null : s.toString();
    }
  }

  private final Socket socket;
  private final DataInputStream in;
  private final OutputStream out;
  private final DefaultHttp2HeadersEncoder encoder = new DefaultHttp2HeadersEncoder();
  private final DefaultHttp2HeadersDecoder decoder = new DefaultHttp2HeadersDecoder(false);
  private final Map<Integer, Answer> answers = new ConcurrentHashMap<>();
  private final Thread reader;
  private int nextStream = 1;
  /** The server's SETTINGS_MAX_CONCURRENT_STREAMS, once its SETTINGS arrived; absent: unlimited. */
  final CompletableFuture<Long> maxConcurrentStreams = new CompletableFuture<>();

  RawHttp2(int port) throws IOException {
    socket = new Socket("127.0.0.1", port);
    in = new DataInputStream(socket.getInputStream());
    out = socket.getOutputStream();
    synchronized (this) {
      out.write(PREFACE);
      frame(SETTINGS, 0, 0, new byte[0]);
      out.flush();
    }
    reader = new Thread(this::read, "raw-h2-reader");
    reader.setDaemon(true);
    reader.start();
  }

  /** Opens a stream; {@code body} null for none. */
  synchronized Answer request(String method, String path, String contentType, byte[] body) throws IOException {
    int id = nextStream;
    nextStream += 2;
    Answer a = new Answer();
    answers.put(id, a);
    Http2Headers h = new DefaultHttp2Headers().method(method).path(path).scheme("http").authority("127.0.0.1");
    if (contentType != null) {
      h.add("content-type", contentType);
      h.add("te", "trailers");
    }
    ByteBuf block = Unpooled.buffer();
    try {
      encoder.encodeHeaders(id, h, block);
    } catch (io.netty.handler.codec.http2.Http2Exception e) {
      throw new IOException(e);
    }
    byte[] bytes = new byte[block.readableBytes()];
    block.readBytes(bytes);
    block.release();
    frame(HEADERS, END_HEADERS | (body == null ? END_STREAM : 0), id, bytes);
    if (body != null) {
      frame(DATA, END_STREAM, id, body);
    }
    out.flush();
    return a;
  }

  private void frame(int type, int flags, int stream, byte[] payload) throws IOException {
    int n = payload.length;
    out.write(new byte[] {(byte) (n >>> 16), (byte) (n >>> 8), (byte) n, (byte) type, (byte) flags,
        (byte) (stream >>> 24), (byte) (stream >>> 16), (byte) (stream >>> 8), (byte) stream});
    out.write(payload);
  }

  private synchronized void send(int type, int flags, int stream, byte[] payload) throws IOException {
    frame(type, flags, stream, payload);
    out.flush();
  }

  private void read() {
    try {
      while (true) {
        int len = (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
        int type = in.readUnsignedByte();
        int flags = in.readUnsignedByte();
        int stream = in.readInt() & 0x7fffffff;
        byte[] p = new byte[len];
        in.readFully(p);
        Answer a = answers.get(stream);
        switch (type) {
          case DATA -> {
            if (a != null) {
              synchronized (a.body) {
                a.body.write(p, (flags & PADDED) != 0 ? 1 : 0, len - padding(p, flags));
              }
            }
            if (len > 0) {
              byte[] inc = {(byte) (len >>> 24), (byte) (len >>> 16), (byte) (len >>> 8), (byte) len};
              send(WINDOW_UPDATE, 0, 0, inc);
              if ((flags & END_STREAM) == 0) {
                send(WINDOW_UPDATE, 0, stream, inc);
              }
            }
            if (a != null && (flags & END_STREAM) != 0) {
              a.done.complete(a);
            }
          }
          case HEADERS -> {
            int start = (flags & PADDED) != 0 ? 1 : 0;
            start += (flags & PRIORITY) != 0 ? 5 : 0;
            int end = len - ((flags & PADDED) != 0 ? p[0] & 0xff : 0);
            Http2Headers h = decoder.decodeHeaders(stream, Unpooled.wrappedBuffer(p, start, end - start));
            if (a != null) {
              if (a.headers == null) {
                a.headers = h;
              } else {
                a.trailers = h;
              }
              if ((flags & END_STREAM) != 0) {
                a.done.complete(a);
              }
            }
          }
          case RST_STREAM -> {
            if (a != null) {
              a.resetCode = ((p[0] & 0xff) << 24) | ((p[1] & 0xff) << 16) | ((p[2] & 0xff) << 8) | (p[3] & 0xff);
              a.done.complete(a);
            }
          }
          case SETTINGS -> {
            if ((flags & 0x1) == 0) {
              long max = -1;
              for (int i = 0; i + 6 <= len; i += 6) {
                int id = ((p[i] & 0xff) << 8) | (p[i + 1] & 0xff);
                long v = ((long) (p[i + 2] & 0xff) << 24) | ((p[i + 3] & 0xff) << 16) | ((p[i + 4] & 0xff) << 8)
                    | (p[i + 5] & 0xff);
                if (id == 0x3) {
                  max = v;
                }
              }
              // The server applies its SETTINGS once acknowledged: the ACK goes before the test
              // learns them, so that no stream it opens next can overtake the ACK.
              send(SETTINGS, 0x1, 0, new byte[0]);
              maxConcurrentStreams.complete(max);
            }
          }
          case PING -> {
            if ((flags & 0x1) == 0) {
              send(PING, 0x1, 0, p);
            }
          }
          default -> {
            // GOAWAY, WINDOW_UPDATE, PRIORITY: nothing this client needs.
          }
        }
      }
    } catch (IOException | io.netty.handler.codec.http2.Http2Exception e) {
      for (Answer a : answers.values()) {
        a.done.completeExceptionally(e);
      }
    }
  }

  private static int padding(byte[] p, int flags) {
    return (flags & PADDED) != 0 ? (p[0] & 0xff) + 1 : 0;
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
