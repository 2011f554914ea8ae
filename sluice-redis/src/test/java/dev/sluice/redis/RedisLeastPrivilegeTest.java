package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Algorithm;
import dev.sluice.ItemDecision;
import dev.sluice.Request;
import dev.sluice.Rule;
import dev.sluice.spi.Batch;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Least privilege (SPEC §12): an ACL user holding only the commands the store needs, as
 * {@code docs/redis.md} lists them, can do everything the store does — decide with every
 * algorithm on the server's clock and on explicit times, peek, decide several items at once,
 * large logs, batches of queued decisions, reset, ping, and find the library again after the
 * server lost it — and each command of the list is needed: without any one of them, something
 * of that fails or the store falls back to the slower script.
 */
class RedisLeastPrivilegeTest {
  /** The commands, as {@code docs/redis.md} gives them. */
  static final List<String> NEEDED = List.of("fcall", "function|load", "evalsha", "eval", "del", "ping", "time", "get",
      "mget", "getrange", "set", "setrange", "pexpire");
  static final String PASSWORD = "least-pw";
  static final long T0 = 1_800_000_000_000_000L;

  /** The user's ACL rules: on, a password, the keys under the default prefix, the commands. */
  static String rules(List<String> commands) {
    return "on >" + PASSWORD + " ~sluice:* " + commands.stream().map(c -> "+" + c).collect(Collectors.joining(" "));
  }

  @Test
  void aUserHoldingOnlyTheDocumentedCommandsDoesEverythingTheStoreDoesEvenAcrossARestart() throws Exception {
    for (Flavor flavor : Flavor.values()) {
      // In the configuration, so that the user survives the restart.
      Standalone server = Standalone.start(flavor, "user sluice " + rules(NEEDED));
      try {
        String uri = "redis://sluice:" + PASSWORD + "@127.0.0.1:" + server.port();
        assertThat(smoke(server, uri, "ok", true)).as("%s: what failed for the documented user", flavor).isEmpty();
      } finally {
        server.close();
      }
    }
  }

  @Test
  void everyDocumentedCommandIsNeeded() throws Exception {
    Standalone server = Standalone.start(Flavor.REDIS);
    Map<String, String> without = new LinkedHashMap<>();
    try {
      for (String c : NEEDED) {
        List<String> fewer = new ArrayList<>(NEEDED);
        fewer.remove(c);
        String user = "without-" + c.replace('|', '-');
        List<String> args = new ArrayList<>(List.of("ACL", "SETUSER", user));
        args.addAll(List.of(rules(fewer).split(" ")));
        server.command(args.toArray(String[]::new));
        without.put(c, smoke(server, "redis://" + user + ":" + PASSWORD + "@127.0.0.1:" + server.port(), user, false));
      }
    } finally {
      server.close();
    }
    without.forEach((c, failure) -> System.out.println("ACL without +" + c + ": " + failure));
    assertThat(without).allSatisfy((c, failure) -> assertThat(failure).as("without +%s", c).isNotEmpty());
  }

  @Test
  void theDocumentedAclLineIsTheTestedOne() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "redis.md"), StandardCharsets.UTF_8);
    assertThat(doc).contains("`ACL SETUSER sluice on >pw ~sluice:* "
        + NEEDED.stream().map(c -> "+" + c).collect(Collectors.joining(" ")) + "`");
  }

  /**
   * Everything the store does, as {@code uri}'s user; rules are named after {@code tag}. Returns
   * what failed first ("step: error"), or "" when everything worked on the library of functions.
   */
  static String smoke(Standalone server, String uri, String tag, boolean restart) {
    server.command("FUNCTION", "FLUSH");
    server.command("SCRIPT", "FLUSH");
    String step = "connect";
    try (RedisStore store = RedisStore.builder(uri).commandTimeout(Duration.ofSeconds(2)).build()) {
      step = "load the library";
      // The store loads it on connecting; a user who may not has it loaded by someone else.
      if (!String.valueOf(server.command("FUNCTION", "LIST")).contains(DecisionScript.FUNCTION)) {
        server.command("FUNCTION", "LOAD", DecisionScript.LIBRARY);
      }
      step = "each algorithm on the server's clock";
      for (Algorithm a : Algorithm.values()) {
        Rule.Builder b = Rule.builder(tag + ".clock." + a.configName()).algorithm(a).window(3, Duration.ofMinutes(1));
        if (a == Algorithm.LEAKY_BUCKET) {
          b.maxWait(Duration.ZERO);
        }
        Rule r = b.build();
        // A leaky bucket that may not wait lets one request through per emission interval (20 s).
        for (int i = 0; i < (a == Algorithm.LEAKY_BUCKET ? 1 : 3); i++) {
          expect(store, one(r, "k", 1, Request.STORE_CLOCK), true, a + " admission " + i);
        }
        expect(store, one(r, "k", 1, Request.STORE_CLOCK), false, a + " denial");
        // A peek answers (whether it would fit depends on the algorithm).
        store.decideSync(one(r, "k", 0, Request.STORE_CLOCK));
      }
      step = "each algorithm on explicit times";
      for (Algorithm a : Algorithm.values()) {
        Rule.Builder b = Rule.builder(tag + ".explicit." + a.configName()).algorithm(a).window(1, Duration.ofMinutes(1));
        if (a == Algorithm.LEAKY_BUCKET) {
          b.maxWait(Duration.ZERO);
        }
        Rule r = b.build();
        expect(store, one(r, "k", 1, T0), true, a + " admission");
        // A decision that consumes nothing records its later time in place.
        expect(store, one(r, "k", 1, T0 + 1_000), false, a + " denial");
        store.decideSync(one(r, "k", 0, T0 + 2_000));
      }
      step = "several items in one request";
      Rule x = Rule.builder(tag + ".multi.x").window(2, Duration.ofMinutes(1)).build();
      Rule y = Rule.builder(tag + ".multi.y").algorithm(Algorithm.TOKEN_BUCKET).window(2, Duration.ofMinutes(1)).build();
      for (int i = 0; i < 3; i++) {
        List<ItemDecision> d = store.decideSync(new Batch(List.of(new ResolvedItem(x, "k", 1, x.windows()),
            new ResolvedItem(y, "k", 1, y.windows())), Request.STORE_CLOCK));
        check(d.get(0).allowed() == (i < 2) && d.get(1).allowed() == (i < 2), "multi-item decision " + i);
      }
      step = "a large log";
      Rule large = Rule.builder(tag + ".large").window(5_000, Duration.ofMinutes(1))
          .window(4_000, Duration.ofSeconds(30)).build();
      for (int i = 0; i < 6; i++) {
        expect(store, one(large, "k", 300, Request.STORE_CLOCK), true, "admission of 300 units " + i);
      }
      expect(store, one(large, "k", 1, Request.STORE_CLOCK), true, "one more unit");
      expect(store, one(large, "k", 4_000, Request.STORE_CLOCK), false, "beyond the limit");
      expect(store, one(large, "k", 0, Request.STORE_CLOCK), true, "peek");
      step = "decisions queued into batches";
      Rule batched = Rule.builder(tag + ".batched").window(5, Duration.ofMinutes(1)).build();
      List<CompletableFuture<List<ItemDecision>>> all = new ArrayList<>();
      for (int i = 0; i < 400; i++) {
        all.add(store.decide(one(batched, "k" + i, 1, Request.STORE_CLOCK)).toCompletableFuture());
      }
      for (CompletableFuture<List<ItemDecision>> f : all) {
        check(f.get(10, TimeUnit.SECONDS).get(0).allowed(), "queued decision");
      }
      step = "reset";
      Rule one = Rule.builder(tag + ".reset").window(1, Duration.ofMinutes(1)).build();
      expect(store, one(one, "k", 1, Request.STORE_CLOCK), true, "admission");
      expect(store, one(one, "k", 1, Request.STORE_CLOCK), false, "denial");
      store.reset(one.name(), "k").toCompletableFuture().get(5, TimeUnit.SECONDS);
      expect(store, one(one, "k", 1, Request.STORE_CLOCK), true, "admission after the reset");
      step = "ping";
      check(store.ping().toCompletableFuture().get(5, TimeUnit.SECONDS), "PONG");
      step = "the library of functions in use";
      check(store.link().usesFunctions(), "the store switched to the script: FCALL refused");
      step = "the library lost (FUNCTION FLUSH, SCRIPT FLUSH)";
      server.command("FUNCTION", "FLUSH");
      server.command("SCRIPT", "FLUSH");
      Rule lost = Rule.builder(tag + ".lost").window(1, Duration.ofMinutes(1)).build();
      expect(store, one(lost, "k", 1, Request.STORE_CLOCK), true, "decision while the library is missing");
      awaitLibrary(server);
      expect(store, one(lost, "k", 1, Request.STORE_CLOCK), false, "decision on the library loaded again");
      if (restart) {
        step = "the server restarted";
        server.stop();
        server.restart();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        List<ItemDecision> d = null;
        while (d == null) {
          try {
            d = store.decideSync(one(lost, "k", 1, Request.STORE_CLOCK));
          } catch (RuntimeException reconnecting) {
            if (System.nanoTime() > deadline) {
              throw reconnecting;
            }
          }
        }
        check(d.get(0).allowed(), "the restarted server's first decision starts afresh");
        awaitLibrary(server);
      }
      step = "the library of functions used throughout";
      check(store.link().usesFunctions(), "the store switched to the script: FCALL or FUNCTION LOAD refused");
      return "";
    } catch (Exception | AssertionError e) {
      Throwable t = e;
      while (t.getCause() != null && !(t instanceof AssertionError)) {
        t = t.getCause();
      }
      return step + ": " + t.getMessage();
    }
  }

  private static void awaitLibrary(Standalone server) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!String.valueOf(server.command("FUNCTION", "LIST")).contains(DecisionScript.FUNCTION)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the library was not loaded again within 5 s");
      }
      Thread.sleep(20);
    }
  }

  private static Batch one(Rule r, String key, long cost, long time) {
    return new Batch(List.of(new ResolvedItem(r, key, cost, r.windows())), time);
  }

  private static void expect(RedisStore store, Batch b, boolean allowed, String what) {
    check(store.decideSync(b).get(0).allowed() == allowed, what + (allowed ? " allowed" : " denied"));
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError("not as expected: " + what);
    }
  }
}
