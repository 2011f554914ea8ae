package dev.sluice.testkit;

import java.util.function.IntFunction;

/** Starting on a free port, again on another one if the port was taken meanwhile. */
final class Ports {
  private Ports() {}

  static ServerProcess withFreePort(IntFunction<ServerProcess> start) {
    AssertionError last = null;
    for (int attempt = 0; attempt < 3; attempt++) {
      int port = ServerProcess.freePort();
      try {
        return start.apply(port);
      } catch (AssertionError e) {
        // Another process may have bound the port between our probe and the server's bind.
        if (e.getMessage() == null || !e.getMessage().contains("in use")) {
          throw e;
        }
        last = e;
      }
    }
    throw last;
  }
}
