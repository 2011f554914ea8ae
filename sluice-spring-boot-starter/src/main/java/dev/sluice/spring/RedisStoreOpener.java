package dev.sluice.spring;

import dev.sluice.redis.RedisStore;
import dev.sluice.spi.Store;
import io.lettuce.core.RedisException;
import io.lettuce.core.resource.ClientResources;

/**
 * Opens the Redis store of {@code sluice.store} on the application's Lettuce
 * {@link ClientResources} when Boot's Redis support made them: the store then starts no event
 * loop or timer threads of its own. It keeps its own connection (its scripts' timeouts and
 * batching are its own), and leaves the resources to Boot to shut down.
 */
final class RedisStoreOpener implements StoreUris.RedisOpener {
  private final ClientResources resources;
  private final String prefix;

  RedisStoreOpener(ClientResources resources, String prefix) {
    this.resources = resources;
    this.prefix = prefix;
  }

  /** The application's resources the store runs on, or null when it has its own. */
  ClientResources resources() {
    return resources;
  }

  @Override
  public Store open(String uri) {
    RedisStore.Builder b = RedisStore.builder(uri);
    if (resources != null) {
      b.clientResources(resources);
    }
    if (prefix != null) {
      b.prefix(prefix);
    }
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      throw new SluiceConfigurationException("sluice.store: " + StoreUris.redacted(String.valueOf(e.getMessage())),
          "Correct the URI in sluice.store.", e);
    } catch (RedisException e) {
      throw new SluiceConfigurationException("cannot connect to the store " + StoreUris.redacted(uri)
          + " (sluice.store): " + StoreUris.redacted(reason(e)),
          "Start the store or correct sluice.store. The application does not start without its store: rules "
              + "with failure_mode: closed would deny every request, and the others would not be enforced.", e);
    }
  }

  private static String reason(Throwable e) {
    StringBuilder b = new StringBuilder();
    for (Throwable t = e; t != null && b.length() < 500; t = t.getCause() == t ? null : t.getCause()) {
      if (t.getMessage() != null) {
        b.append(b.length() == 0 ? "" : ": ").append(t.getMessage());
      }
    }
    return b.length() == 0 ? e.getClass().getSimpleName() : b.toString();
  }

}
