package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.DecisionListener;
import dev.sluice.FailureMode;
import dev.sluice.Item;
import dev.sluice.RateLimiter;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.Sluice;
import dev.sluice.testkit.Cluster;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.resource.ClientResources;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A store on the application's Lettuce resources or client starts no threads of its own, and its
 * close leaves what it was given running.
 */
class SharedClientTest {
  /** Its own server: a test freezes it. */
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS).perClass();

  @RegisterExtension
  static final RedisExtension<Cluster> cluster = RedisExtension.cluster(Flavor.REDIS);

  static final Rule RULE = Rule.builder("shared.client").window(1_000_000, Duration.ofHours(1)).build();

  /**
   * The number Netty will give the next pool of threads it makes (each event-loop group, Lettuce's
   * computation threads, its timer): every pool has a thread factory, and each factory takes the
   * next number of a JVM-wide counter. A probe factory reads it.
   */
  static int nextPoolNumber() {
    String name = new DefaultThreadFactory("probe").newThread(() -> {}).getName();
    return Integer.parseInt(name.split("-")[1]);
  }

  /** How many pools of threads {@code action} made. */
  static int poolsMadeBy(Runnable action) {
    int before = nextPoolNumber();
    action.run();
    return nextPoolNumber() - before - 1;
  }

  /** Decides a unit on {@code store} and a request across two Cluster slots; closes the limiter, hence the store. */
  static void decidesThenCloses(RedisStore store) {
    try (RateLimiter limiter = Sluice.builder().store(store).rules(RULE).build()) {
      assertThat(limiter.acquire(RULE.name(), "a").degraded()).isFalse();
      assertThat(limiter.tryAcquireAsync(RULE.name(), "a").toCompletableFuture().join()).isTrue();
      assertThat(slot("a")).isNotEqualTo(slot("b"));
      assertThat(limiter.acquire(Request.of(Item.of(RULE.name(), "a"), Item.of(RULE.name(), "b"))).allowed()).isTrue();
    }
  }

  static int slot(String key) {
    return SlotHash.getSlot(("sluice:{" + RULE.name() + "|" + key + "}").getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void storesOnSharedClientResourcesStartNoThreadPoolsAndLeaveThemRunningWhenClosed() throws Exception {
    ClientResources resources = ClientResources.create();
    try {
      RedisStore first = RedisStore.builder(redis.get().uri()).clientResources(resources).build();
      assertThat(first.ping().toCompletableFuture().join()).isTrue();
      RedisStore[] second = new RedisStore[1];
      assertThat(poolsMadeBy(() -> {
        second[0] = RedisStore.builder(redis.get().uri()).clientResources(resources).build();
        assertThat(second[0].ping().toCompletableFuture().join()).isTrue();
      })).as("the second store runs on the first one's threads").isZero();
      // The count bites: a store on resources of its own makes pools.
      assertThat(poolsMadeBy(() -> {
        RedisStore own = RedisStore.connect(redis.get().uri());
        assertThat(own.ping().toCompletableFuture().join()).isTrue();
        own.close();
      })).isPositive();

      decidesThenCloses(first);
      assertThat(resources.eventExecutorGroup().isShuttingDown()).isFalse();
      resources.timer().newTimeout(t -> {}, 1, TimeUnit.SECONDS).cancel();
      decidesThenCloses(second[0]);
      decidesThenCloses(RedisStore.builder(redis.get().uri()).clientResources(resources).build());
      assertThat(resources.eventExecutorGroup().isShuttingDown()).isFalse();
    } finally {
      resources.shutdown(0, 2, TimeUnit.SECONDS).get();
    }
  }

  @Test
  void aStoreOnTheApplicationsClientStartsNoThreadsAndLeavesTheClientOpenWhenClosed() {
    RedisClient app = RedisClient.create();
    try (StatefulRedisConnection<String, String> appConnection = app.connect(RedisURI.create(redis.get().uri()))) {
      RedisStore[] store = new RedisStore[1];
      assertThat(poolsMadeBy(() -> store[0] = RedisStore.builder(redis.get().uri()).client(app).build())).isZero();
      decidesThenCloses(store[0]);
      assertThat(appConnection.sync().ping()).isEqualTo("PONG");
      try (StatefulRedisConnection<String, String> another = app.connect(RedisURI.create(redis.get().uri()))) {
        assertThat(another.sync().ping()).isEqualTo("PONG");
      }
    } finally {
      app.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }

  @Test
  void aStoreOnTheApplicationsClusterClientDecidesAcrossSlotsAndLeavesTheClientOpenWhenClosed() {
    List<RedisURI> seeds = cluster.get().ports().stream().map(p -> RedisURI.create("redis://127.0.0.1:" + p)).toList();
    RedisClusterClient app = RedisClusterClient.create(seeds);
    try (StatefulRedisClusterConnection<String, String> appConnection = app.connect()) {
      RedisStore store = RedisStore.builder(cluster.get().uri()).client(app).build();
      assertThat(store.describe()).contains("redis-cluster://");
      decidesThenCloses(store);
      assertThat(appConnection.sync().ping()).isEqualTo("PONG");
      try (StatefulRedisClusterConnection<String, String> another = app.connect()) {
        assertThat(another.sync().ping()).isEqualTo("PONG");
      }
    } finally {
      app.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }

  /**
   * A client may be set never to time out a command; the limiter counts a store call until it
   * completes, so on a frozen server every slot would stay taken for good.
   */
  @Test
  void theStoreTimesOutItsCommandsOnAClientThatNeverDoes() throws InterruptedException {
    RedisClient app = RedisClient.create();
    app.setOptions(ClientOptions.builder().timeoutOptions(TimeoutOptions.builder().timeoutCommands(false).build())
        .build());
    List<Throwable> storeErrors = new CopyOnWriteArrayList<>();
    Rule open = Rule.builder("shared.open").window(100, Duration.ofHours(1)).failureMode(FailureMode.OPEN).build();
    RedisStore store = RedisStore.builder(redis.get().uri()).client(app).commandTimeout(Duration.ofMillis(300)).build();
    try (RateLimiter limiter = Sluice.builder().store(store).rules(open).storeTimeout(Duration.ofMillis(50))
        .maxInFlight(1).listener(new DecisionListener() {
          @Override
          public void onStoreError(Request request, Throwable error) {
            storeErrors.add(error);
          }
        }).build()) {
      assertThat(limiter.acquire("shared.open", "k").degraded()).isFalse();
      redis.get().pause();
      try {
        assertThat(limiter.acquire("shared.open", "k").degraded()).isTrue();
        assertThat(storeErrors).singleElement().isInstanceOf(TimeoutException.class);
        // The frozen call holds the one slot until the store's command timeout ends it; then a
        // request reaches the store again (and times out at the limiter).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
          storeErrors.clear();
          assertThat(limiter.acquire("shared.open", "k").degraded()).isTrue();
          if (!(storeErrors.get(0) instanceof RejectedExecutionException)) {
            break;
          }
          assertThat(System.nanoTime()).as("the slot was freed by the store's command timeout").isLessThan(deadline);
          Thread.sleep(20);
        }
      } finally {
        redis.get().resume();
      }
    } finally {
      app.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }

  @Test
  void clientSettingsThatDoNotFitTogetherAreRefusedNamingTheProblem() {
    RedisClient app = RedisClient.create();
    RedisClusterClient appCluster = RedisClusterClient.create(List.of(RedisURI.create("redis://127.0.0.1:1")));
    ClientResources resources = ClientResources.create();
    try {
      assertThatThrownBy(() -> RedisStore.builder("redis-cluster://127.0.0.1:1").client(app).build())
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is a Cluster: give the store a Cluster client");
      assertThatThrownBy(() -> RedisStore.builder("redis://127.0.0.1:1").client(appCluster).build())
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a Cluster client needs a redis-cluster:// URI");
      assertThatThrownBy(() -> RedisStore.builder("redis://127.0.0.1:1").client(app).clientResources(resources).build())
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a client and client resources");
      assertThatThrownBy(() -> RedisStore.builder("redis://127.0.0.1:1").client(app).requestQueueSize(10).build())
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("requestQueueSize");
      assertThatThrownBy(() -> RedisStore.builder("redis://127.0.0.1:1").client(app).client(appCluster).build())
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("two clients");
    } finally {
      app.shutdown(0, 2, TimeUnit.SECONDS);
      appCluster.shutdown(0, 2, TimeUnit.SECONDS);
      resources.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }
}
