package dev.sluice.bench.redis;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Records, with MONITOR, the commands that one action sends to the server: how the load tool
 * learns the exact EVALSHA (script, keys, arguments) of a library's decision without reaching into
 * its internals, so that redis-benchmark can replay it.
 */
final class MonitorCapture {
  private MonitorCapture() {}

  /** The commands {@code action} caused, each as its arguments; MONITOR's own echo excluded. */
  static List<List<String>> capture(int port, Runnable action) {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      s.setSoTimeout(5000);
      OutputStream out = s.getOutputStream();
      BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1));
      out.write("*1\r\n$7\r\nMONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String ok = in.readLine();
      if (!"+OK".equals(ok)) {
        throw new IllegalStateException("MONITOR answered " + ok);
      }
      action.run();
      // A marker after the action tells where its commands end.
      String marker = "sluice-bench-monitor-end";
      try (Socket m = new Socket(InetAddress.getLoopbackAddress(), port)) {
        m.getOutputStream().write(("*2\r\n$4\r\nECHO\r\n$" + marker.length() + "\r\n" + marker + "\r\n")
            .getBytes(StandardCharsets.US_ASCII));
        m.getOutputStream().flush();
        m.getInputStream().read(new byte[64]);
      }
      List<List<String>> commands = new ArrayList<>();
      String line;
      while ((line = in.readLine()) != null) {
        // +1700000000.123456 [0 127.0.0.1:51234] "evalsha" "ab12..." "1" "key" ...
        int bracket = line.indexOf("] ");
        if (!line.startsWith("+") || bracket < 0) {
          continue;
        }
        List<String> args = parse(line.substring(bracket + 2));
        if (args.size() == 2 && args.get(0).equalsIgnoreCase("echo") && args.get(1).equals(marker)) {
          return commands;
        }
        commands.add(args);
      }
      throw new IllegalStateException("MONITOR stream ended before the marker");
    } catch (IOException e) {
      throw new UncheckedIOException("MONITOR on port " + port, e);
    }
  }

  /** MONITOR's quoted, backslash-escaped arguments. */
  static List<String> parse(String s) {
    List<String> args = new ArrayList<>();
    int i = 0;
    while (i < s.length()) {
      if (s.charAt(i) != '"') {
        i++;
        continue;
      }
      StringBuilder b = new StringBuilder();
      i++;
      while (i < s.length() && s.charAt(i) != '"') {
        char c = s.charAt(i);
        if (c == '\\' && i + 1 < s.length()) {
          char n = s.charAt(i + 1);
          switch (n) {
            case 'n' -> b.append('\n');
            case 'r' -> b.append('\r');
            case 't' -> b.append('\t');
            case 'a' -> b.append('\u0007');
            case 'b' -> b.append('\b');
            case 'x' -> {
              b.append((char) Integer.parseInt(s.substring(i + 2, i + 4).toLowerCase(Locale.ROOT), 16));
              i += 2;
            }
            default -> b.append(n);
          }
          i += 2;
        } else {
          b.append(c);
          i++;
        }
      }
      args.add(b.toString());
      i++;
    }
    return args;
  }
}
