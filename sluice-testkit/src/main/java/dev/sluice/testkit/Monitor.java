package dev.sluice.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Records what a server receives, with {@code MONITOR}: one line per command, naming the client
 * that sent it ({@code [0 127.0.0.1:50550]}) or {@code [0 lua]} for commands a script ran.
 */
public final class Monitor implements AutoCloseable {
  private final Socket socket;
  private final Thread reader;
  private final List<String> lines = new ArrayList<>();

  private Monitor(Socket socket) {
    this.socket = socket;
    this.reader = new Thread(this::read, "sluice-testkit-monitor");
    this.reader.setDaemon(true);
  }

  /** Starts monitoring the server on 127.0.0.1:{@code port}; returns once the server confirmed. */
  public static Monitor start(int port) {
    try {
      Socket s = new Socket();
      s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      s.getOutputStream().write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      Monitor m = new Monitor(s);
      BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
      String ok = in.readLine();
      if (!"+OK".equals(ok)) {
        s.close();
        throw new AssertionError("MONITOR answered " + ok);
      }
      m.start(in);
      return m;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot MONITOR port " + port, e);
    }
  }

  private BufferedReader in;

  private void start(BufferedReader in) {
    this.in = in;
    reader.start();
  }

  private void read() {
    try {
      String line;
      while ((line = in.readLine()) != null) {
        synchronized (lines) {
          lines.add(line.startsWith("+") ? line.substring(1) : line);
        }
      }
    } catch (IOException ignored) {
      // Closed by close().
    }
  }

  /** The lines seen so far. */
  public List<String> lines() {
    synchronized (lines) {
      return new ArrayList<>(lines);
    }
  }

  /** The commands sent by clients (not run by scripts), upper-cased names, in order. */
  public List<String> clientCommands() {
    List<String> out = new ArrayList<>();
    for (String l : lines()) {
      int open = l.indexOf('[');
      int close = l.indexOf(']', open);
      if (open < 0 || close < 0 || l.substring(open, close).endsWith(" lua")) {
        continue;
      }
      int q = l.indexOf('"', close);
      int q2 = q < 0 ? -1 : l.indexOf('"', q + 1);
      if (q2 > q) {
        out.add(l.substring(q + 1, q2).toUpperCase(java.util.Locale.ROOT));
      }
    }
    return out;
  }

  @Override
  public void close() {
    try {
      socket.close();
      reader.join(2000);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
