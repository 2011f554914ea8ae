package dev.sluice.server.cli;

import dev.sluice.Ticker;
import dev.sluice.server.StoreFactory;
import dev.sluice.server.StoreUnavailableException;
import dev.sluice.spi.Store;
import java.util.function.Function;

/** Opens the store a command's {@code --store} names. */
final class Stores {
  private Stores() {}

  /**
   * A URI that is wrong is the user's mistake (exit 2); a store that cannot be reached is
   * unavailable (exit 69). No message holds a password: {@link StoreFactory} redacts them.
   */
  static Store open(String command, String uri, Ticker ticker) {
    return open(command, uri, u -> StoreFactory.open(u, ticker));
  }

  /**
   * Whatever {@code opener} makes of {@code uri}, with the errors of {@link #open(String, String,
   * Ticker)}: {@code opener} throws {@link IllegalArgumentException} for a wrong URI and
   * {@link StoreUnavailableException} for a store it cannot reach, neither holding a password.
   */
  static <T> T open(String command, String uri, Function<String, T> opener) {
    try {
      return opener.apply(uri);
    } catch (IllegalArgumentException e) {
      throw new CliException(command + ": --store: " + e.getMessage());
    } catch (StoreUnavailableException e) {
      throw new CliException(command + ": " + e.getMessage(), Main.EXIT_UNAVAILABLE);
    }
  }
}
