package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.sluice.Algorithm;
import dev.sluice.ItemDecision;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.RedisExtension;
import dev.sluice.testkit.Standalone;
import io.lettuce.core.RedisCommandTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Decisions that queue behind the calls in flight go together as one call (see {@link
 * Coalescer}): each must be decided exactly as it would be alone, in the order it was asked for.
 */
class BatchedCallsTest {
  @RegisterExtension
  static final RedisExtension<Standalone> redis = RedisExtension.standalone(Flavor.REDIS);

  private static Batch one(Rule rule, String key, long cost, long time) {
    return new Batch(List.of(new ResolvedItem(rule, key, cost, rule.windowsFor(key))), time);
  }

  /**
   * Random traces of every algorithm, cut into groups that share one explicit time and are asked
   * for all at once: the Redis store, one call in flight, sends each group's tail as batches. The
   * memory store, deciding the same requests one by one in the same order, must agree on every
   * number; requests of one to three items, repeated keys within a group.
   */
  @Test
  void queuedDecisionsGoTogetherAndDecideExactlyAsOneByOne() throws Exception {
    redis.get().flushAll();
    TraceGenerator trace = new TraceGenerator(97, List.of(Algorithm.values()), 3, 4, 1_700_000_000_000_000L,
        TraceGenerator.Profile.SMALL);
    MemoryStore memory = MemoryStore.builder().ticker(new FakeTicker()).automaticSweeps(false).build();
    SplittableRandom rnd = new SplittableRandom(97);
    long fcallsBefore = redis.get().commandCalls("fcall");
    int decisions = 0;
    try (RedisStore store = RedisStore.builder(redis.get().uri()).prefix("batch:").ttlSlack(Duration.ofMinutes(5))
        .callsInFlight(1).build()) {
      for (int group = 0; group < 120; group++) {
        int size = 1 + rnd.nextInt(24);
        List<Batch> batches = new ArrayList<>();
        long time = 0;
        for (int i = 0; i < size; i++) {
          Batch b = trace.next();
          if (i == 0) {
            time = b.timeMicros();
          }
          batches.add(new Batch(b.items(), time));
        }
        List<CompletableFuture<List<ItemDecision>>> actual = new ArrayList<>();
        for (Batch b : batches) {
          actual.add(store.decide(b).toCompletableFuture());
        }
        for (int i = 0; i < size; i++) {
          Batch b = batches.get(i);
          assertThat(actual.get(i).get(10, TimeUnit.SECONDS))
              .as("group %d request %d of %d at %d µs, items %s", group, i, size, time, b.items())
              .isEqualTo(memory.decideSync(b));
        }
        decisions += size;
      }
    }
    long fcalls = redis.get().commandCalls("fcall") - fcallsBefore;
    System.out.printf("BatchedCallsTest: %d decisions in %d calls%n", decisions, fcalls);
    assertThat(fcalls).as("calls for %d decisions asked for in groups", decisions).isLessThan(decisions);
  }

  /**
   * Eight threads ask for 2,000 decisions on four keys without waiting for answers, so that they
   * queue and go in batches: every key admits exactly its limit, on the server's clock, and
   * every decision is answered.
   */
  @Test
  void manyThreadsShareOneLimitExactlyThroughBatches() throws Exception {
    Rule rule = Rule.builder("batch.threads").window(100, Duration.ofMinutes(10)).window(150, Duration.ofHours(1)).build();
    String[] keys = {"a", "b", "c", "d"};
    long fcallsBefore = redis.get().commandCalls("fcall");
    try (RedisStore store = RedisStore.builder(redis.get().uri()).prefix("threads:").build()) {
      List<List<CompletableFuture<List<ItemDecision>>>> perKey = new ArrayList<>();
      for (int k = 0; k < keys.length; k++) {
        perKey.add(java.util.Collections.synchronizedList(new ArrayList<>()));
      }
      java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(8);
      try {
        List<java.util.concurrent.Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
          int seed = t;
          done.add(threads.submit(() -> {
            SplittableRandom rnd = new SplittableRandom(seed);
            for (int i = 0; i < 250; i++) {
              int k = rnd.nextInt(keys.length);
              perKey.get(k).add(store.decide(one(rule, keys[k], 1, Request.STORE_CLOCK)).toCompletableFuture());
            }
          }));
        }
        for (java.util.concurrent.Future<?> d : done) {
          d.get(30, TimeUnit.SECONDS);
        }
      } finally {
        threads.shutdownNow();
      }
      int decisions = 0;
      for (int k = 0; k < keys.length; k++) {
        List<CompletableFuture<List<ItemDecision>>> fs = perKey.get(k);
        long admitted = 0;
        for (CompletableFuture<List<ItemDecision>> f : fs) {
          if (f.get(30, TimeUnit.SECONDS).get(0).allowed()) {
            admitted++;
          }
        }
        assertThat(admitted).as("admitted on key %s of %d asked", keys[k], fs.size()).isEqualTo(Math.min(100, fs.size()));
        decisions += fs.size();
      }
      assertThat(decisions).isEqualTo(2_000);
      long fcalls = redis.get().commandCalls("fcall") - fcallsBefore;
      System.out.printf("BatchedCallsTest: 8 threads, %d decisions in %d calls%n", decisions, fcalls);
      assertThat(fcalls).as("calls for 2,000 decisions asked for at once").isLessThan(decisions);
    }
  }

  /**
   * While the server is stopped, one call is in flight and everything else waits; when it runs
   * again, the 39 decisions that waited go as one call, in the order they were asked for: the
   * first three of each key are admitted, and the server's clock decides them all at one instant.
   * The two keys alternate, so the call's quick path reads them with one {@code MGET} and must
   * read each key's value as its own admissions left it, not as {@code MGET} found it.
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"SLIDING_LOG", "TOKEN_BUCKET"})
  void decisionsThatWaitedGoAsOneCallInTheirOrder(Algorithm algorithm) throws Exception {
    Rule rule = Rule.builder("batch.order." + algorithm.configName()).algorithm(algorithm)
        .window(5, Duration.ofMinutes(1)).window(3, Duration.ofSeconds(3)).build();
    try (RedisStore store = RedisStore.builder(redis.get().uri()).prefix("order:").callsInFlight(1)
        .commandTimeout(Duration.ofSeconds(10)).build()) {
      store.decideSync(one(rule, "warm", 1, Request.STORE_CLOCK));
      long fcallsBefore = redis.get().commandCalls("fcall");
      List<CompletableFuture<List<ItemDecision>>> f = new ArrayList<>();
      redis.get().pause();
      try {
        f.add(store.decide(one(rule, "first", 1, Request.STORE_CLOCK)).toCompletableFuture());
        for (int i = 0; i < 39; i++) {
          f.add(store.decide(one(rule, i % 2 == 0 ? "even" : "odd", 1, Request.STORE_CLOCK)).toCompletableFuture());
        }
      } finally {
        redis.get().resume();
      }
      List<Boolean> even = new ArrayList<>();
      List<Boolean> odd = new ArrayList<>();
      for (int i = 1; i < f.size(); i++) {
        boolean allowed = f.get(i).get(10, TimeUnit.SECONDS).get(0).allowed();
        (i % 2 == 1 ? even : odd).add(allowed);
      }
      assertThat(f.get(0).get().get(0).allowed()).isTrue();
      // 3 per 3 s binds first: the first three of each key, in the order asked for.
      assertThat(even).hasSize(20).containsExactlyElementsOf(firstAllowed(3, 20));
      assertThat(odd).hasSize(19).containsExactlyElementsOf(firstAllowed(3, 19));
      ItemDecision lastEven = f.get(39).get().get(0);
      assertThat(lastEven.windows().get(0).remaining()).isEqualTo(2);
      assertThat(lastEven.windows().get(1).remaining()).isZero();
      assertThat(redis.get().commandCalls("fcall") - fcallsBefore).as("the one in flight, then one batch").isEqualTo(2);
    }
  }

  /**
   * With the server stopped and four calls allowed in flight, the first two decisions (half of
   * four) go at once as calls of their own; the next ones wait until four of them wait (then go
   * as one call) or a call returns: of eleven decisions, two batches of four go while the server
   * stands still, and the eleventh when the first call returns. Every decision is answered, and
   * the key admits exactly its limit.
   */
  @Test
  void beyondTwoCallsInFlightDecisionsWaitForCompanyOrAReturn() throws Exception {
    Rule rule = Rule.builder("batch.company").window(6, Duration.ofMinutes(1)).build();
    try (RedisStore store = RedisStore.builder(redis.get().uri()).prefix("company:").callsInFlight(4).minBatch(4)
        .commandTimeout(Duration.ofSeconds(10)).build()) {
      store.decideSync(one(rule, "warm", 1, Request.STORE_CLOCK));
      long fcallsBefore = redis.get().commandCalls("fcall");
      List<CompletableFuture<List<ItemDecision>>> f = new ArrayList<>();
      redis.get().pause();
      try {
        for (int i = 0; i < 11; i++) {
          f.add(store.decide(one(rule, "k", 1, Request.STORE_CLOCK)).toCompletableFuture());
        }
        // (asked for while the server stands still: none has returned)
        assertThat(f).noneMatch(CompletableFuture::isDone);
      } finally {
        redis.get().resume();
      }
      List<Boolean> allowed = new ArrayList<>();
      for (CompletableFuture<List<ItemDecision>> d : f) {
        allowed.add(d.get(10, TimeUnit.SECONDS).get(0).allowed());
      }
      assertThat(allowed).containsExactlyElementsOf(firstAllowed(6, 11));
      assertThat(redis.get().commandCalls("fcall") - fcallsBefore)
          .as("two alone, two batches of four, then the one left when a call returned").isEqualTo(5);
    }
  }

  /**
   * A batch sends each distinct item argument once. Queued requests of one rule and cost (every
   * item with the first argument), of two items of that rule, and of other costs mixed in
   * between: each decided as the memory store decides it, in one call after the one in flight.
   */
  @Test
  void requestsSharingTheirArgumentsDecideAsOneByOne() throws Exception {
    Rule rule = Rule.builder("batch.shared").window(4, Duration.ofMinutes(1)).window(2, Duration.ofSeconds(5)).build();
    MemoryStore memory = MemoryStore.builder().ticker(new FakeTicker()).automaticSweeps(false).build();
    long t = 1_800_000_000_000_000L;
    List<List<Batch>> groups = new ArrayList<>();
    // one item each, one argument
    List<Batch> same = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      same.add(one(rule, "k" + i % 3, 1, t));
    }
    groups.add(same);
    // two items each (two keys of the rule), every item with the one argument
    List<Batch> pairs = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      pairs.add(new Batch(List.of(new ResolvedItem(rule, "p" + i % 2, 1, rule.windowsFor("p")),
          new ResolvedItem(rule, "q" + i % 3, 1, rule.windowsFor("q"))), t + 1));
    }
    groups.add(pairs);
    // costs 1 and 2 interleaved, and pairs among them: items point at either argument
    List<Batch> mixed = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      if (i % 3 == 2) {
        mixed.add(new Batch(List.of(new ResolvedItem(rule, "m" + i % 2, 2, rule.windowsFor("m")),
            new ResolvedItem(rule, "n", 1, rule.windowsFor("n"))), t + 2));
      } else {
        mixed.add(one(rule, "m" + i % 2, 1 + i % 2, t + 2));
      }
    }
    groups.add(mixed);
    try (RedisStore store = RedisStore.builder(redis.get().uri()).prefix("shared:").callsInFlight(1)
        .ttlSlack(Duration.ofMinutes(5)).build()) {
      for (List<Batch> group : groups) {
        store.decideSync(one(rule, "warm", 1, Request.STORE_CLOCK));
        long fcallsBefore = redis.get().commandCalls("fcall");
        List<CompletableFuture<List<ItemDecision>>> f = new ArrayList<>();
        redis.get().pause();
        try {
          for (Batch b : group) {
            f.add(store.decide(b).toCompletableFuture());
          }
        } finally {
          redis.get().resume();
        }
        for (int i = 0; i < group.size(); i++) {
          assertThat(f.get(i).get(10, TimeUnit.SECONDS)).as("request %d, items %s", i, group.get(i).items())
              .isEqualTo(memory.decideSync(group.get(i)));
        }
        assertThat(redis.get().commandCalls("fcall") - fcallsBefore).as("the first alone, then one batch").isEqualTo(2);
      }
    }
  }

  /**
   * A batch has one time: queued requests at different explicit times, and on the server's
   * clock, go in separate calls, each decided as the memory store decides it.
   */
  @Test
  void requestsAtDifferentTimesGoInSeparateCalls() throws Exception {
    Rule rule = Rule.builder("batch.times").window(2, Duration.ofSeconds(10)).build();
    MemoryStore memory = MemoryStore.builder().ticker(new FakeTicker()).automaticSweeps(false).build();
    long t1 = 1_800_000_000_000_000L;
    long t2 = t1 + 11_000_000;
    long[] times = {t1, t1, t1, t2, t2, t2, t2};
    try (RedisStore store = RedisStore.builder(redis.get().uri()).prefix("times:").callsInFlight(1)
        .ttlSlack(Duration.ofMinutes(5)).build()) {
      store.decideSync(one(rule, "warm", 1, Request.STORE_CLOCK));
      long fcallsBefore = redis.get().commandCalls("fcall");
      List<CompletableFuture<List<ItemDecision>>> f = new ArrayList<>();
      CompletableFuture<List<ItemDecision>> clock;
      redis.get().pause();
      try {
        for (long t : times) {
          f.add(store.decide(one(rule, "k", 1, t)).toCompletableFuture());
        }
        clock = store.decide(one(rule, "other", 1, Request.STORE_CLOCK)).toCompletableFuture();
      } finally {
        redis.get().resume();
      }
      for (int i = 0; i < times.length; i++) {
        assertThat(f.get(i).get(10, TimeUnit.SECONDS)).as("request %d at %d µs", i, times[i])
            .isEqualTo(memory.decideSync(one(rule, "k", 1, times[i])));
      }
      assertThat(clock.get(10, TimeUnit.SECONDS).get(0).allowed()).isTrue();
      // the first alone (in flight while the server stood still), t1's other two, t2's four, the clock's one
      assertThat(redis.get().commandCalls("fcall") - fcallsBefore).isEqualTo(4);
    }
  }

  /**
   * A decision never goes out later than the command timeout after it was asked for. With the
   * server stopped, the call in flight times out; the next call takes what waited less than the
   * timeout (up to 128), and times out too; what waited longer fails unsent. When the server
   * runs again, exactly the decisions that were sent are counted, and no other.
   */
  @Test
  void decisionsThatWaitedLongerThanTheTimeoutFailUnsent() throws Exception {
    Rule rule = Rule.builder("batch.stale").window(1, Duration.ofMinutes(1)).build();
    String prefix = "stale:";
    List<CompletableFuture<List<ItemDecision>>> f = new ArrayList<>();
    try (RedisStore store = RedisStore.builder(redis.get().uri()).prefix(prefix).callsInFlight(1)
        .commandTimeout(Duration.ofMillis(200)).build()) {
      store.decideSync(one(rule, "warm", 1, Request.STORE_CLOCK));
      Set<String> sent = new HashSet<>();
      int unsent = 0;
      redis.get().pause();
      try {
        for (int i = 0; i < 300; i++) {
          f.add(store.decide(one(rule, "k" + i, 1, Request.STORE_CLOCK)).toCompletableFuture());
        }
        for (int i = 0; i < f.size(); i++) {
          CompletableFuture<List<ItemDecision>> c = f.get(i);
          Throwable cause = catchThrowableOfType(() -> c.get(10, TimeUnit.SECONDS), ExecutionException.class).getCause();
          assertThat(cause).isInstanceOf(RedisCommandTimeoutException.class);
          if (String.valueOf(cause.getMessage()).contains("longer than the command timeout")) {
            unsent++;
          } else {
            sent.add(store.keyName(rule.name(), "k" + i));
          }
        }
      } finally {
        redis.get().resume();
      }
      assertThat(sent).as("the call in flight, then at most one batch").hasSizeBetween(1, 1 + Coalescer.MAX_REQUESTS);
      assertThat(unsent).isEqualTo(300 - sent.size());
      // The calls that reached the stopped server run now.
      Set<String> counted = Set.of();
      for (int tries = 0; tries < 250 && counted.size() < sent.size(); tries++) {
        Thread.sleep(20); // their writes arrive asynchronously
        counted = keys(prefix + "{batch.stale|k*");
      }
      assertThat(counted).isEqualTo(sent);
      assertThat(store.decideSync(one(rule, "after", 1, Request.STORE_CLOCK)).get(0).allowed()).isTrue();
    }
  }

  private static List<Boolean> firstAllowed(int allowed, int size) {
    List<Boolean> out = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      out.add(i < allowed);
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  private static Set<String> keys(String pattern) {
    Set<String> out = new HashSet<>();
    for (Object k : (List<Object>) redis.get().command("KEYS", pattern)) {
      out.add(k instanceof byte[] b ? new String(b, java.nio.charset.StandardCharsets.UTF_8) : String.valueOf(k));
    }
    return out;
  }
}
