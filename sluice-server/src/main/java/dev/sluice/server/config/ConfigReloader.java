package dev.sluice.server.config;

import dev.sluice.RateLimiter;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the service's configuration current. It polls the configured file or directory (polling
 * is simple and works on every file system, network mounts and Kubernetes config-map symlink
 * swaps included) and, when any file's bytes changed, loads everything again: a good
 * configuration replaces the rules in force atomically ({@link RateLimiter#updateRules}, which
 * keeps the state of unchanged rules); a bad one is rejected with its error kept for
 * {@code /v1/rules} and the metrics, and the last good configuration stays in force.
 */
public final class ConfigReloader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ConfigReloader.class);

  /** Told of every reload attempt after the first load. */
  public interface Listener {
    void onReload(boolean ok, ServiceConfig config, String error);
  }

  /**
   * The outcome of the latest reload attempt.
   *
   * @param lastError the latest attempt's error, or null if it succeeded
   * @param lastErrorAt when that error was found, or null
   * @param loadedAt when the configuration in force was loaded
   * @param generation how many configurations have been put in force (1 after the first load)
   */
  public record Status(String lastError, Instant lastErrorAt, Instant loadedAt, long generation) {}

  private final Path path;
  private final ConfigFiles files;
  private final RateLimiter limiter;
  private final Listener listener;
  private final Clock clock;
  private volatile ServiceConfig current;
  private volatile Status status;
  private Map<Path, byte[]> seen;
  private ScheduledExecutorService poller;

  /**
   * Loads {@code path} and puts its rules in force in {@code limiter}.
   *
   * @throws InvalidConfigException if the configuration is bad: the service must not start then
   */
  public ConfigReloader(Path path, ConfigFiles files, RateLimiter limiter, Listener listener, Clock clock)
      throws InvalidConfigException {
    this.path = path;
    this.files = files;
    this.limiter = limiter;
    this.listener = listener;
    this.clock = clock;
    Map<Path, byte[]> contents = readAll();
    ServiceConfig first = files.load(contents);
    limiter.updateRules(first.rules());
    this.current = first;
    this.seen = contents;
    this.status = new Status(null, null, clock.instant(), 1);
    LOG.info("configuration loaded from {}: {} rules in {} files", path, first.rules().size(), first.sources().size());
  }

  public ServiceConfig current() {
    return current;
  }

  public Status status() {
    return status;
  }

  /** Starts polling every {@code interval} on a daemon thread. */
  public synchronized void start(Duration interval) {
    if (poller != null) {
      return;
    }
    poller = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sluice-config-reload");
      t.setDaemon(true);
      return t;
    });
    long ms = Math.max(1, interval.toMillis());
    poller.scheduleWithFixedDelay(() -> {
      try {
        check();
      } catch (RuntimeException e) {
        LOG.warn("configuration check failed: {}", e.toString());
      }
    }, ms, ms, TimeUnit.MILLISECONDS);
  }

  /**
   * Looks for changes once and reloads if there are any.
   *
   * @return true if a new configuration was put in force
   */
  public synchronized boolean check() {
    Map<Path, byte[]> contents;
    try {
      contents = readAll();
    } catch (InvalidConfigException e) {
      if (seen != null) {
        seen = null;
        fail(e.getMessage());
      }
      return false;
    }
    if (seen != null && sameContents(seen, contents)) {
      return false;
    }
    seen = contents;
    ServiceConfig next;
    try {
      next = files.load(contents);
    } catch (InvalidConfigException | RuntimeException e) {
      fail(e.getMessage());
      return false;
    }
    limiter.updateRules(next.rules());
    current = next;
    status = new Status(null, null, clock.instant(), status.generation() + 1);
    LOG.info("configuration reloaded from {}: {} rules in {} files", path, next.rules().size(), next.sources().size());
    listener.onReload(true, next, null);
    return true;
  }

  private void fail(String error) {
    Status s = status;
    status = new Status(error, clock.instant(), s.loadedAt(), s.generation());
    LOG.warn("configuration rejected, the previous one stays in force: {}", error);
    listener.onReload(false, current, error);
  }

  private Map<Path, byte[]> readAll() throws InvalidConfigException {
    List<Path> list = ConfigFiles.list(path);
    Map<Path, byte[]> m = new LinkedHashMap<>();
    for (Path f : list) {
      m.put(f, ConfigFiles.read(f));
    }
    return m;
  }

  private static boolean sameContents(Map<Path, byte[]> a, Map<Path, byte[]> b) {
    if (!a.keySet().equals(b.keySet())) {
      return false;
    }
    for (Map.Entry<Path, byte[]> e : a.entrySet()) {
      if (!Arrays.equals(e.getValue(), b.get(e.getKey()))) {
        return false;
      }
    }
    return true;
  }

  @Override
  public synchronized void close() {
    if (poller != null) {
      poller.shutdownNow();
      poller = null;
    }
  }
}
