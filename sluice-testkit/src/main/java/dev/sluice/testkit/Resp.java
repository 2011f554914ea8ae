package dev.sluice.testkit;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal RESP2 client for administering test servers (readiness checks, cluster setup,
 * failover), so the test kit needs no Redis client library. One connection per call: the kit
 * issues few commands and must not hold sockets to servers it may kill.
 */
final class Resp {
  private Resp() {}

  /** An error reply from the server. */
  static final class ErrorReply extends RuntimeException {
    ErrorReply(String message) {
      super(message);
    }
  }

  /**
   * Sends one command to 127.0.0.1:{@code port} and returns its reply: String for simple and bulk
   * strings, Long for integers, List for arrays, null for nil.
   */
  static Object call(int port, String... args) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      s.setSoTimeout(5000);
      OutputStream out = s.getOutputStream();
      ByteArrayOutputStream cmd = new ByteArrayOutputStream();
      write(cmd, "*" + args.length + "\r\n");
      for (String a : args) {
        byte[] b = a.getBytes(StandardCharsets.UTF_8);
        write(cmd, "$" + b.length + "\r\n");
        cmd.write(b);
        write(cmd, "\r\n");
      }
      out.write(cmd.toByteArray());
      out.flush();
      return read(new BufferedInputStream(s.getInputStream()));
    }
  }

  private static void write(ByteArrayOutputStream out, String s) {
    out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
  }

  private static Object read(InputStream in) throws IOException {
    int type = in.read();
    String line = line(in);
    switch (type) {
      case '+':
        return line;
      case '-':
        throw new ErrorReply(line);
      case ':':
        return Long.parseLong(line);
      case '$': {
        int n = Integer.parseInt(line);
        if (n < 0) {
          return null;
        }
        byte[] b = in.readNBytes(n + 2);
        return new String(b, 0, n, StandardCharsets.UTF_8);
      }
      case '*': {
        int n = Integer.parseInt(line);
        if (n < 0) {
          return null;
        }
        List<Object> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          list.add(read(in));
        }
        return list;
      }
      case -1:
        throw new IOException("connection closed before a reply");
      default:
        throw new IOException("unexpected reply type '" + (char) type + "'");
    }
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) != -1) {
      if (c == '\r') {
        in.read(); // '\n'
        break;
      }
      b.write(c);
    }
    return b.toString(StandardCharsets.UTF_8);
  }
}
