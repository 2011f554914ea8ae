package dev.sluice.testkit;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Starts real servers for a test class. Register it as a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);
 * ...
 * RedisStore.connect(redis.get().uri());
 * }</pre>
 *
 * <p>By default the servers are shared by every test class of the JVM that asks for the same
 * topology and flavor: they start on first use and stop (by PID) when the JVM exits, which keeps
 * a suite fast. {@link #perClass()} gives a class its own servers, stopped after its last test —
 * for tests that change the topology (failover). A missing server binary fails the class with the
 * command that installs it.
 */
public final class RedisExtension<T extends RedisDeployment>
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {

  private static final Map<String, RedisDeployment> SHARED = new ConcurrentHashMap<>();

  private final String id;
  private final Supplier<T> starter;
  private final boolean shared;
  private final boolean flushBeforeEach;
  private volatile T deployment;

  private RedisExtension(String id, Supplier<T> starter, boolean shared, boolean flushBeforeEach) {
    this.id = id;
    this.starter = starter;
    this.shared = shared;
    this.flushBeforeEach = flushBeforeEach;
  }

  /** One server. */
  public static RedisExtension<Standalone> standalone(Flavor flavor) {
    return new RedisExtension<>("standalone-" + flavor, () -> Standalone.start(flavor), true, false);
  }

  /** One server with extra lines of redis.conf, e.g. {@code "enable-debug-command yes"}. */
  public static RedisExtension<Standalone> standalone(Flavor flavor, String... config) {
    return new RedisExtension<>("standalone-" + flavor + "-" + String.join("|", config),
        () -> Standalone.start(flavor, config), true, false);
  }

  /** A master, a replica and three Sentinels. */
  public static RedisExtension<SentinelGroup> sentinel(Flavor flavor) {
    return new RedisExtension<>("sentinel-" + flavor, () -> SentinelGroup.start(flavor), true, false);
  }

  /** A Cluster of three masters. */
  public static RedisExtension<Cluster> cluster(Flavor flavor) {
    return new RedisExtension<>("cluster-" + flavor, () -> Cluster.start(flavor), true, false);
  }

  /** A Cluster of three masters with a replica each (see {@link Cluster#withReplicas}). */
  public static RedisExtension<Cluster> clusterWithReplicas(Flavor flavor) {
    return new RedisExtension<>("cluster-replicas-" + flavor, () -> Cluster.withReplicas(flavor), true, false);
  }

  /** Servers of this class's own, stopped after its last test. */
  public RedisExtension<T> perClass() {
    return new RedisExtension<>(id, starter, false, flushBeforeEach);
  }

  /** Deletes every key before each test. */
  public RedisExtension<T> flushBeforeEach() {
    return new RedisExtension<>(id, starter, shared, true);
  }

  /**
   * The running deployment.
   *
   * @throws IllegalStateException before the extension's {@code beforeAll}
   */
  public T get() {
    T d = deployment;
    if (d == null) {
      throw new IllegalStateException("servers are not started: register the extension as a static @RegisterExtension field");
    }
    return d;
  }

  @Override
  @SuppressWarnings("unchecked")
  public void beforeAll(ExtensionContext context) {
    if (shared) {
      deployment = (T) SHARED.computeIfAbsent(id, k -> starter.get());
    } else {
      deployment = starter.get();
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    if (flushBeforeEach) {
      get().flushAll();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (!shared && deployment != null) {
      deployment.close();
      deployment = null;
    }
  }

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> SHARED.values().forEach(RedisDeployment::close),
        "sluice-testkit-stop-shared"));
  }
}
