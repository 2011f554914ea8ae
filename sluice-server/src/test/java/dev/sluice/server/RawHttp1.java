package dev.sluice.server;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP/1.1 connection, kept alive, written and read byte by byte, so that a test sees what a
 * pooled client sees: which response says {@code Connection: close}, and when the server closes.
 */
final class RawHttp1 implements Closeable {
  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  record Response(int status, Map<String, String> headers, String body) {
    boolean connectionClose() {
      return "close".equalsIgnoreCase(headers.getOrDefault("connection", ""));
    }
  }

  private RawHttp1(Socket socket) throws IOException {
    this.socket = socket;
    this.in = socket.getInputStream();
    this.out = socket.getOutputStream();
  }

  static RawHttp1 connect(String host, int port) throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress(host, port), 2_000);
    s.setSoTimeout(10_000);
    s.setTcpNoDelay(true);
    return new RawHttp1(s);
  }

  static RawHttp1 connect(int port) throws IOException {
    return connect("127.0.0.1", port);
  }

  Response post(String path, String json) throws IOException {
    send(head("POST", path, json.getBytes(StandardCharsets.UTF_8).length), json);
    return read();
  }

  Response get(String path) throws IOException {
    send(head("GET", path, -1), "");
    return read();
  }

  /** Sends the head of a POST and only the first {@code sent} bytes of its body. */
  void postPartially(String path, String json, int sent) throws IOException {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    out.write(head("POST", path, body.length).getBytes(StandardCharsets.US_ASCII));
    out.write(body, 0, sent);
    out.flush();
  }

  /** Sends a whole POST without waiting for its answer ({@link #response()} reads it). */
  void sendPost(String path, String json) throws IOException {
    send(head("POST", path, json.getBytes(StandardCharsets.UTF_8).length), json);
  }

  /** Sends the rest of a body begun with {@link #postPartially}, and reads the answer. */
  Response finish(String json, int sent) throws IOException {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    out.write(body, sent, body.length - sent);
    out.flush();
    return read();
  }

  /** True if the server closes the connection (end of stream or reset) within {@code millis}. */
  boolean closedByServerWithin(int millis) throws IOException {
    int before = socket.getSoTimeout();
    socket.setSoTimeout(millis);
    try {
      return in.read() == -1;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true;
    } finally {
      if (!socket.isClosed()) {
        socket.setSoTimeout(before);
      }
    }
  }

  private static String head(String method, String path, int length) {
    return method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + (length >= 0 ? "Content-Type: application/json\r\nContent-Length: " + length + "\r\n" : "")
        + "\r\n";
  }

  private void send(String head, String body) throws IOException {
    out.write(head.getBytes(StandardCharsets.US_ASCII));
    out.write(body.getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  /** Reads the next answer. */
  Response response() throws IOException {
    return read();
  }

  private Response read() throws IOException {
    String status = line();
    if (status == null) {
      throw new IOException("the server closed the connection without answering");
    }
    Map<String, String> headers = new LinkedHashMap<>();
    for (String l = line(); l != null && !l.isEmpty(); l = line()) {
      int colon = l.indexOf(':');
      headers.put(l.substring(0, colon).trim().toLowerCase(Locale.ROOT), l.substring(colon + 1).trim());
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if (headers.containsKey("content-length")) {
      body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
    } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
      for (int n = Integer.parseInt(line().trim(), 16); n > 0; n = Integer.parseInt(line().trim(), 16)) {
        body.write(in.readNBytes(n));
        line();
      }
      line();
    }
    return new Response(Integer.parseInt(status.split(" ")[1]), headers, body.toString(StandardCharsets.UTF_8));
  }

  /** A line without its CRLF, or null at the end of the stream. */
  private String line() throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (int c = in.read(); c != '\n'; c = in.read()) {
      if (c == -1) {
        return b.size() == 0 ? null : b.toString(StandardCharsets.US_ASCII);
      }
      if (c != '\r') {
        b.write(c);
      }
    }
    return b.toString(StandardCharsets.US_ASCII);
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
