package dev.sluice.spring;

import dev.sluice.RateLimiter;
import dev.sluice.config.ConfigException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Reloads {@code sluice.config} when it changes, with the service's semantics: polling (works on
 * every file system and on config-map symlink swaps) looks at each file's size, modification time
 * and identity; only when one moved are the files read, and only when their text changed are
 * they parsed. A good configuration replaces the rules and Envoy domains in force at once (the
 * state of unchanged rules is kept); a bad one — a syntax error, a rule the store cannot decide,
 * or one that would leave a route or an annotated method without its operation, or a route
 * without its domain or a limit for its descriptors — is logged and rejected, and the last good
 * configuration stays in force.
 */
final class ConfigWatcher implements SmartLifecycle {
  private static final Log LOG = LogFactory.getLog(ConfigWatcher.class);

  /** Told of every reload attempt. */
  interface Listener {
    void onReload(boolean ok, int rules);
  }

  private final RuleSources sources;
  private final RateLimiter limiter;
  private final EnvoyDomains domains;
  private final Requirements requirements;
  private final Duration interval;
  private final List<Listener> listeners;
  private Map<Path, List<Object>> stamps;
  private Map<String, String> texts;
  private volatile String lastError;
  private ScheduledExecutorService poller;

  ConfigWatcher(RuleSources sources, Map<String, String> loaded, RateLimiter limiter, EnvoyDomains domains,
      Requirements requirements, Duration interval, List<Listener> listeners) throws ConfigException {
    this.sources = sources;
    this.limiter = limiter;
    this.domains = domains;
    this.requirements = requirements;
    this.interval = interval;
    this.listeners = List.copyOf(listeners);
    this.texts = loaded;
    this.stamps = sources.stamps();
  }

  /** The latest rejected configuration's error, or null if the latest attempt succeeded. */
  String lastError() {
    return lastError;
  }

  /** Looks once: reloads if the files changed. Returns whether new rules were put in force. */
  synchronized boolean poll() {
    Map<String, String> now;
    try {
      Map<Path, List<Object>> st = sources.stamps();
      if (st.equals(stamps)) {
        return false;
      }
      stamps = st;
      now = sources.read();
      if (now.equals(texts)) {
        return false;
      }
    } catch (ConfigException e) {
      return rejected(RuleSources.describe(e));
    }
    try {
      RuleSources.Loaded loaded = RuleSources.load(now);
      var c = loaded.config();
      List<String> problems = requirements.problems(c.rules(), loaded.domains());
      if (!problems.isEmpty()) {
        return rejected(String.join("\n", problems));
      }
      limiter.updateRules(c.rules());
      // After the rules: a request resolved on the new domains finds their rules in force.
      domains.replace(loaded.domains());
      texts = now;
      lastError = null;
      LOG.info("Sluice: configuration reloaded from " + sources.config() + ", " + c.rules().size() + " rules");
      listeners.forEach(l -> l.onReload(true, c.rules().size()));
      return true;
    } catch (ConfigException e) {
      return rejected(RuleSources.describe(e));
    } catch (RuntimeException e) {
      return rejected(String.valueOf(e.getMessage()));
    }
  }

  private boolean rejected(String error) {
    lastError = error;
    LOG.error("Sluice: the configuration at " + sources.config() + " was rejected; the last good one stays in "
        + "force:\n" + error);
    int rules = limiter.rules().size();
    listeners.forEach(l -> l.onReload(false, rules));
    return false;
  }

  @Override
  public synchronized void start() {
    poller = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sluice-config-watcher");
      t.setDaemon(true);
      return t;
    });
    long ms = Math.max(1, interval.toMillis());
    poller.scheduleWithFixedDelay(() -> {
      try {
        poll();
      } catch (RuntimeException e) {
        LOG.error("Sluice: polling the configuration failed", e);
      }
    }, ms, ms, TimeUnit.MILLISECONDS);
  }

  @Override
  public synchronized void stop() {
    if (poller != null) {
      poller.shutdownNow();
      poller = null;
    }
  }

  @Override
  public synchronized boolean isRunning() {
    return poller != null;
  }
}
