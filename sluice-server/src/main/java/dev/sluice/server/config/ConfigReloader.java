package dev.sluice.server.config;

import dev.sluice.RateLimiter;
import dev.sluice.UnsupportedRuleException;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigLocation;
import dev.sluice.config.ConfigProblem;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the service's configuration current. It polls the configured file or directory (polling
 * is simple and works on every file system, network mounts and Kubernetes config-map symlink
 * swaps included). A poll looks at each file's size, modification time and identity, without
 * reading it; only when one of those moved are the files read (each at most
 * {@link dev.sluice.config.ConfigLoader#MAX_FILE_BYTES}, checked before reading), and only when
 * their bytes changed are they parsed and loaded again: a good
 * configuration replaces the rules in force atomically ({@link RateLimiter#updateRules}, which
 * keeps the state of unchanged rules); a bad one — including one with a rule the store cannot
 * decide — is rejected with its error kept for {@code /v1/rules} and the metrics, and the last
 * good configuration stays in force.
 */
public final class ConfigReloader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ConfigReloader.class);
  private static final long SETTLE_MILLIS = 100;
  /** A stamp newer than this, against the clock, is not trusted to show the next write (see trusted()). */
  private static final long RACY_NANOS = TimeUnit.SECONDS.toNanos(2);
  /** How long a changed file must stay the same before a failure to load it counts. */
  private final long settleMillis;

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
  private final RateLimiter limiter;
  private final Listener listener;
  private final Clock clock;
  private volatile ServiceConfig current;
  private volatile Status status;
  /** The digest of each file's bytes last parsed, or null to parse at the next read. */
  private Map<Path, String> seen;
  private final boolean mergeEnvoyDomains;
  /** The files' stamps when they were last read, or null to read them at the next poll. */
  private Map<Path, ConfigFiles.Stamp> stamps;
  /** The stamps of the files when reading them last failed, so that a failure is reported once. */
  private Map<Path, ConfigFiles.Stamp> failedRead;
  private ScheduledExecutorService poller;
  private long reads;
  private long parses;

  /**
   * Loads {@code path} and puts its rules in force in {@code limiter}.
   *
   * @throws ConfigException if the configuration is bad: the service must not start then
   */
  public ConfigReloader(Path path, RateLimiter limiter, Listener listener, Clock clock) throws ConfigException {
    this(path, limiter, listener, clock, false);
  }

  /** @param mergeEnvoyDomains whether Envoy files of one domain merge (else they are an error) */
  public ConfigReloader(Path path, RateLimiter limiter, Listener listener, Clock clock, boolean mergeEnvoyDomains)
      throws ConfigException {
    this(path, limiter, listener, clock, SETTLE_MILLIS, mergeEnvoyDomains);
  }

  ConfigReloader(Path path, RateLimiter limiter, Listener listener, Clock clock, long settleMillis)
      throws ConfigException {
    this(path, limiter, listener, clock, settleMillis, false);
  }

  private ConfigReloader(Path path, RateLimiter limiter, Listener listener, Clock clock, long settleMillis,
      boolean mergeEnvoyDomains) throws ConfigException {
    this.settleMillis = settleMillis;
    this.mergeEnvoyDomains = mergeEnvoyDomains;
    this.path = path;
    this.limiter = limiter;
    this.listener = listener;
    this.clock = clock;
    Map<Path, ConfigFiles.Stamp> before = ConfigFiles.stamps(path);
    Map<Path, String> contents = ConfigFiles.read(path);
    ServiceConfig first = ConfigFiles.load(contents, mergeEnvoyDomains);
    logWarnings(first);
    apply(first);
    this.current = first;
    this.seen = digests(contents);
    this.stamps = trusted(before);
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
    Map<Path, ConfigFiles.Stamp> now;
    try {
      now = ConfigFiles.stamps(path);
    } catch (ConfigException e) {
      if (seen != null) {
        seen = null;
        stamps = null;
        fail(e.getMessage());
      }
      return false;
    }
    if (now.equals(stamps)) {
      return false;
    }
    Map<Path, String> contents;
    try {
      reads++;
      contents = ConfigFiles.read(path);
    } catch (ConfigException e) {
      // Reported once for these stamps: a file too large is not read again until it changes.
      seen = null;
      stamps = trusted(now);
      if (!now.equals(failedRead)) {
        failedRead = now;
        fail(e.getMessage());
      }
      return false;
    }
    failedRead = null;
    stamps = trusted(now);
    Map<Path, String> digests = digests(contents);
    if (digests.equals(seen)) {
      return false;
    }
    seen = digests;
    parses++;
    ServiceConfig next;
    try {
      next = ConfigFiles.load(contents, mergeEnvoyDomains);
      apply(next);
    } catch (ConfigException | RuntimeException e) {
      if (settled(contents)) {
        fail(e.getMessage());
      } else {
        // Caught in the middle of a write: judge the file at the next poll, once written.
        seen = null;
        stamps = null;
      }
      return false;
    }
    logWarnings(next);
    current = next;
    status = new Status(null, null, clock.instant(), status.generation() + 1);
    LOG.info("configuration reloaded from {}: {} rules in {} files", path, next.rules().size(), next.sources().size());
    listener.onReload(true, next, null);
    return true;
  }

  /** How many times polling read the files, and parsed them, since the first load. */
  synchronized long reads() {
    return reads;
  }

  synchronized long parses() {
    return parses;
  }

  /**
   * {@code now}, or null if a file was modified so recently that a second write within the file
   * system's clock tick, of the same size, could leave the same stamp: such files are read again
   * (and parsed only if their bytes changed) until their stamp is older than that.
   */
  private Map<Path, ConfigFiles.Stamp> trusted(Map<Path, ConfigFiles.Stamp> now) {
    long recent = TimeUnit.MILLISECONDS.toNanos(clock.millis()) - RACY_NANOS;
    for (ConfigFiles.Stamp st : now.values()) {
      if (st.modifiedNanos() > recent) {
        return null;
      }
    }
    return now;
  }

  /** The SHA-256 of each file's text: what tells a change of bytes, without keeping the texts. */
  private static Map<Path, String> digests(Map<Path, String> contents) {
    Map<Path, String> out = new LinkedHashMap<>();
    contents.forEach((file, text) -> out.put(file, ConfigFiles.digest(text)));
    return out;
  }

  /**
   * Whether the files still hold {@code contents} a moment later. An editor or a copy that
   * writes a file in place can be read half-written; such a read must not be reported as a
   * broken configuration (the last good one stays in force either way).
   */
  private boolean settled(Map<Path, String> contents) {
    try {
      Thread.sleep(settleMillis);
      return contents.equals(ConfigFiles.read(path));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return true;
    } catch (ConfigException e) {
      return false;
    }
  }

  /**
   * Puts {@code config}'s rules in force. A rule the limiter's store cannot decide (a window
   * beyond the store's maximum) is a configuration error, at the rule's place in its file: the
   * rules in force stay.
   */
  private void apply(ServiceConfig config) throws ConfigException {
    try {
      limiter.updateRules(config.rules());
    } catch (UnsupportedRuleException e) {
      ConfigLocation at = config.origin(e.rule());
      throw new ConfigException(ConfigProblem.at(at != null ? at : ConfigLocation.of(path.toString()), e.getMessage()));
    }
  }

  private void fail(String error) {
    Status s = status;
    status = new Status(error, clock.instant(), s.loadedAt(), s.generation());
    LOG.warn("configuration rejected, the previous one stays in force: {}", error);
    listener.onReload(false, current, error);
  }

  private static void logWarnings(ServiceConfig c) {
    for (ConfigProblem w : c.warnings()) {
      LOG.warn("{}", w);
    }
  }

  @Override
  public synchronized void close() {
    if (poller != null) {
      poller.shutdownNow();
      poller = null;
    }
  }
}
