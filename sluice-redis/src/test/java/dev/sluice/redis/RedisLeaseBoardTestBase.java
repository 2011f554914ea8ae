package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.conformance.LeaseBoardContract;
import dev.sluice.spi.LeaseBoard;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Redis lease board on one topology, on the server's clock: time passes by waiting. Each test
 * works under a prefix of its own on a store shared by the class.
 */
abstract class RedisLeaseBoardTestBase extends LeaseBoardContract {
  abstract String uri();

  /** A command to the master holding {@code key}. */
  abstract Object commandFor(String key, String... args);

  String prefix;
  RedisStore store;

  @BeforeEach
  void freshPrefix() {
    prefix = "l" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ":";
    store = SharedStore.of(uri()).store();
  }

  RedisLeaseBoard board(int maxInstances) {
    return new RedisLeaseBoard(store.link(), prefix, maxInstances);
  }

  @Override
  protected LeaseBoard board() {
    return board(RedisLeaseBoard.MAX_INSTANCES);
  }

  @Override
  protected void pass(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  protected long shortMillis() {
    return 300;
  }

  @Test
  void theStoreOffersItsBoardUnderItsPrefix() {
    LeaseBoard board = store.leaseBoard().orElseThrow();
    String id = "probe-" + prefix;
    join(board.report(id, bytes("r"), 2_000));
    assertThat(join(board.reports(1 << 20))).containsKey(id);
    assertThat(commandFor("sluice:{leases}:reports", "HEXISTS", "sluice:{leases}:reports", id)).isEqualTo(1L);
  }

  @Test
  void pastItsInstancesANewReportIsRefusedUntilAnOldOneExpires() {
    RedisLeaseBoard board = board(3);
    join(board.report("a", bytes("1"), shortMillis()));
    join(board.report("b", bytes("1"), LONG));
    join(board.report("c", bytes("1"), LONG));
    assertThatThrownBy(() -> join(board.report("d", bytes("1"), LONG)))
        .rootCause().isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("reports of 3 instances are kept, the most the board holds");
    assertThat(join(board.report("c", bytes("2"), LONG)).instances()).isEqualTo(3);
    pass(shortMillis() + 50);
    assertThat(join(board.report("d", bytes("1"), LONG)).instances()).isEqualTo(3);
    assertThat(join(board.reports(1 << 20))).containsOnlyKeys("b", "c", "d");
    assertThat(commandFor(prefix + "{leases}:seen", "ZCARD", prefix + "{leases}:seen")).isEqualTo(3L);
  }

  @Test
  void publishingPastTheBoundWritesNothing() {
    RedisLeaseBoard board = board(2);
    LeaseBoard.Leader a = join(board.campaign("a", LONG));
    assertThat(join(board.publish("a", a.token(), Map.of("x", bytes("1"), "y", bytes("1")), LONG))).isTrue();
    assertThatThrownBy(() -> join(board.publish("a", a.token(), Map.of("z", bytes("1")), LONG)))
        .rootCause().isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("sizes of 3 instances would be kept, more than the 2 the board holds");
    assertThat(join(board.report("z", new byte[0], LONG)).sizes()).isEmpty();
    // Replacing those kept is no growth.
    assertThat(join(board.publish("a", a.token(), Map.of("x", bytes("2")), LONG))).isTrue();
  }

  @Test
  void everyKeyLivesUnderTheLeasesTagAndExpires() {
    LeaseBoard board = board();
    LeaseBoard.Leader a = join(board.campaign("a", LONG));
    join(board.report("x", bytes("r"), 10_000));
    join(board.publish("a", a.token(), Map.of("x", bytes("s")), 10_000));
    for (String k : board(1).keyNames()) {
      assertThat(k).startsWith(prefix + "{leases}:");
      long ttl = (Long) commandFor(k, "PTTL", k);
      assertThat(ttl).as(k).isPositive();
    }
    assertThat((String) commandFor(prefix + "{leases}:sizes", "HGET", prefix + "{leases}:sizes", "@"))
        .startsWith(a.token() + " ");
  }

  /**
   * A failover may bring the board back without its last writes (replication is asynchronous):
   * here the leader record and the token counter are lost outright. The leader that held the lost
   * term is fenced, even when a new leader draws the same token again: a publish needs the id too.
   */
  @Test
  void aLeaderWhoseRecordAFailoverLostIsFencedEvenIfItsTokenComesBack() {
    LeaseBoard board = board();
    LeaseBoard.Leader a = join(board.campaign("a", LONG));
    commandFor(prefix + "{leases}:leader", "DEL", prefix + "{leases}:leader", prefix + "{leases}:epoch");
    assertThat(join(board.publish("a", a.token(), Map.of("x", bytes("1")), LONG))).isFalse();
    LeaseBoard.Leader b = join(board.campaign("b", LONG));
    assertThat(b.instance()).isEqualTo("b");
    assertThat(b.token()).isEqualTo(a.token()); // the counter started again
    assertThat(join(board.publish("a", a.token(), Map.of("x", bytes("2")), LONG))).isFalse();
    assertThat(join(board.publish("b", b.token(), Map.of("x", bytes("3")), LONG))).isTrue();
    assertThat(join(board.report("x", new byte[0], LONG)).sizes()).isEqualTo(bytes("3"));
  }

  @Test
  void theReservedIdIsRefused() {
    assertThatThrownBy(() -> join(board().report("@", new byte[0], LONG))).rootCause()
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("\"@\" is reserved");
  }

  /**
   * Threads campaigning with short terms and publishing with their own tokens, stale ones and
   * others', on the server's clock: each token won by one instance, each term begun after the one
   * before ended (by the times the server answered), each accepted publish its token's winner's.
   */
  @Test
  void neverTwoLeadersNorAPublishFromANonLeader() throws Exception {
    LeaseBoard board = board();
    java.util.Queue<LeaseBoard.Leader> campaigns = new java.util.concurrent.ConcurrentLinkedQueue<>();
    java.util.Queue<String> accepted = new java.util.concurrent.ConcurrentLinkedQueue<>();
    java.util.Set<Long> tokens = java.util.concurrent.ConcurrentHashMap.newKeySet();
    List<java.util.concurrent.CompletableFuture<Void>> runs = new java.util.ArrayList<>();
    for (int t = 0; t < 4; t++) {
      java.util.Random r = new java.util.Random(t);
      int thread = t;
      runs.add(java.util.concurrent.CompletableFuture.runAsync(() -> {
        for (int step = 0; step < 150; step++) {
          String id = "t" + thread + "i" + r.nextInt(2);
          if (r.nextBoolean()) {
            // A term of its own per instance, so that the latest end seen is its term's end.
            LeaseBoard.Leader l = join(board.campaign(id, 2 + Math.floorMod(id.hashCode(), 20)));
            campaigns.add(l);
            tokens.add(l.token());
          } else {
            long token = tokens.stream().skip(r.nextInt(Math.max(1, tokens.size()))).findFirst().orElse(1L);
            if (join(board.publish(id, token, Map.of("x", bytes(id)), LONG))) {
              accepted.add(id + "/" + token);
            }
          }
        }
      }));
    }
    for (var run : runs) {
      run.get(60, java.util.concurrent.TimeUnit.SECONDS);
    }
    // However the threads were scheduled (a fast run may renew one leader throughout), a takeover
    // by an instance of no thread ends the run, so that the checks below always span one.
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
    LeaseBoard.Leader last;
    do {
      Thread.sleep(2);
      last = join(board.campaign("late", 5));
      campaigns.add(last);
    } while (!"late".equals(last.instance()) && System.nanoTime() < deadline);
    Map<Long, String> holder = new java.util.TreeMap<>();
    Map<Long, Long> first = new java.util.HashMap<>();
    Map<Long, Long> lastUntil = new java.util.HashMap<>();
    for (LeaseBoard.Leader l : campaigns) {
      String before = holder.putIfAbsent(l.token(), l.instance());
      assertThat(before == null || before.equals(l.instance())).as("token %d held by one instance", l.token()).isTrue();
      first.merge(l.token(), l.nowMillis(), Math::min);
      lastUntil.merge(l.token(), l.untilMillis(), Math::max);
    }
    Long previous = null;
    for (long token : holder.keySet()) {
      if (previous != null) {
        assertThat(first.get(token)).as("token %d began before token %d's term ended", token, previous)
            .isGreaterThanOrEqualTo(lastUntil.get(previous));
      }
      previous = token;
    }
    assertThat(holder.size()).as("leaders replaced one another").isGreaterThan(1);
    for (String a : accepted) {
      String[] p = a.split("/");
      assertThat(holder.get(Long.parseLong(p[1]))).as("publish accepted from %s", a).isEqualTo(p[0]);
    }
  }

  /** Many reports, more than one HSCAN page: all read, and no more than the bytes asked. */
  @Test
  void reportsArePagedAndBounded() {
    LeaseBoard board = board();
    for (int i = 0; i < 300; i++) {
      join(board.report("i" + i, new byte[100], LONG));
    }
    assertThat(join(board.reports(1 << 20))).hasSize(300);
    assertThat(join(board.reports(100 * 150 + 99))).hasSize(150);
  }
}
