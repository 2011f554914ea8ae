package dev.sluice.server.http;

/**
 * What the service may tell a client about a failure. Sluice's own argument checks say what was
 * wrong in words meant for the caller; a library's messages name its classes, settings and
 * internals, and never reach a client.
 */
public final class ClientMessages {
  /** Package prefixes and words of the libraries' messages ({@code `} quotes Jackson's settings). */
  private static final String[] INTERNALS = {"com.linecorp", "com.fasterxml", "com.google", "io.netty", "io.grpc",
      "io.lettuce", "io.envoyproxy", "java.", "javax.", "Exception", "Jackson", "Armeria", "`"};

  private ClientMessages() {}

  /** The message of {@code t} if Sluice's own code threw it, else {@code fallback}. */
  public static String of(Throwable t, String fallback) {
    String m = t.getMessage();
    if (m == null || m.isBlank() || !thrownBySluice(t)) {
      return fallback;
    }
    return m;
  }

  /** Whether {@code message} names a class, package or setting of the code underneath. */
  public static boolean namesInternals(String message) {
    for (String s : INTERNALS) {
      if (message.contains(s)) {
        return true;
      }
    }
    return false;
  }

  private static boolean thrownBySluice(Throwable t) {
    StackTraceElement[] st = t.getStackTrace();
    // Without a trace there is no telling where it came from: Sluice's checks keep theirs.
    return st.length > 0 && st[0].getClassName().startsWith("dev.sluice.");
  }
}
