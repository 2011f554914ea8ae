package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.spi.LeaseBoard;
import dev.sluice.spi.LeaseBoard.Leader;
import dev.sluice.spi.LeaseBoard.ReportAnswer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What every store's {@link LeaseBoard} does: one leader at a time, fencing by token, reports and
 * sizes that replace, expire and are counted, and entries bounded in bytes. A store's test gives
 * a fresh board per test and a way to let time pass on the store's clock.
 */
public abstract class LeaseBoardContract {
  /** A fresh board for each test: nothing campaigned, reported or published yet. */
  protected abstract LeaseBoard board();

  /** Lets {@code millis} pass on the store's clock (a fake clock's advance, or a wait). */
  protected abstract void pass(long millis);

  /** A term or ttl short enough to wait out, long enough for a few calls within it. */
  protected abstract long shortMillis();

  /** Long enough never to run out during a test. */
  protected static final long LONG = 600_000;

  protected static <T> T join(CompletionStage<T> stage) {
    return stage.toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).join();
  }

  protected static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  protected static String text(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

  /** The leader in force, as an instance that reports sees it. */
  protected static Leader leaderSeen(LeaseBoard board) {
    return join(board.report("observer", new byte[0], LONG)).leader();
  }

  @Test
  void oneLeaderAmongSeveralCampaigningAtOnce() {
    LeaseBoard board = board();
    List<CompletableFuture<Leader>> answers = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      String id = "instance-" + i;
      answers.add(CompletableFuture.supplyAsync(() -> join(board.campaign(id, LONG))));
    }
    List<Leader> seen = answers.stream().map(CompletableFuture::join).toList();
    Leader first = seen.get(0);
    assertThat(first.instance()).startsWith("instance-");
    assertThat(first.token()).isPositive();
    assertThat(first.untilMillis()).isGreaterThan(first.nowMillis());
    assertThat(seen).allSatisfy(l -> {
      assertThat(l.instance()).isEqualTo(first.instance());
      assertThat(l.token()).isEqualTo(first.token());
    });
  }

  @Test
  void renewalKeepsTheTokenAndMovesTheTermOn() {
    LeaseBoard board = board();
    Leader won = join(board.campaign("a", LONG));
    assertThat(won.instance()).isEqualTo("a");
    pass(5);
    Leader renewed = join(board.campaign("a", LONG));
    assertThat(renewed.token()).isEqualTo(won.token());
    assertThat(renewed.untilMillis()).isGreaterThanOrEqualTo(won.untilMillis() + 5);
    Leader other = join(board.campaign("b", LONG));
    assertThat(other.instance()).isEqualTo("a");
    assertThat(other.token()).isEqualTo(won.token());
  }

  @Test
  void aTermThatRunsOutLetsAnotherWinWithALargerToken() {
    LeaseBoard board = board();
    Leader a = join(board.campaign("a", shortMillis()));
    pass(shortMillis() + 50);
    assertThat(leaderSeen(board).instance()).isNull();
    Leader b = join(board.campaign("b", LONG));
    assertThat(b.instance()).isEqualTo("b");
    assertThat(b.token()).isGreaterThan(a.token());
    assertThat(join(board.campaign("a", LONG))).extracting(Leader::instance, Leader::token)
        .containsExactly("b", b.token());
  }

  @Test
  void theLeaderIsReadWithoutElectingAnyoneOrCountingTheReader() {
    LeaseBoard board = board();
    Leader none = join(board.leader());
    assertThat(none.instance()).isNull();
    assertThat(none.token()).isZero();
    assertThat(none.untilMillis()).isZero();
    assertThat(none.nowMillis()).isPositive();
    // Reading wrote nothing: still no leader, no report kept, and the first campaign wins.
    assertThat(join(board.leader()).instance()).isNull();
    assertThat(join(board.reports(1 << 20))).isEmpty();
    Leader won = join(board.campaign("a", LONG));
    Leader read = join(board.leader());
    assertThat(read).extracting(Leader::instance, Leader::token, Leader::untilMillis)
        .containsExactly("a", won.token(), won.untilMillis());
    assertThat(read.nowMillis()).isGreaterThanOrEqualTo(won.nowMillis());
    join(board.resign("a", won.token()));
    assertThat(join(board.leader()).instance()).isNull();
  }

  @Test
  void aLeaderWhoseTermRanOutIsReadAsNone() {
    LeaseBoard board = board();
    join(board.campaign("a", shortMillis()));
    assertThat(join(board.leader()).instance()).isEqualTo("a");
    pass(shortMillis() + 50);
    assertThat(join(board.leader())).extracting(Leader::instance, Leader::token).containsExactly(null, 0L);
  }

  @Test
  void aDeposedLeadersPublishIsRefusedAndWritesNothing() {
    LeaseBoard board = board();
    Leader a = join(board.campaign("a", shortMillis()));
    assertThat(join(board.publish("a", a.token(), Map.of("x", bytes("from a")), LONG))).isTrue();
    pass(shortMillis() + 50);
    // Its term ran out and no one took over: still refused.
    assertThat(join(board.publish("a", a.token(), Map.of("x", bytes("late")), LONG))).isFalse();
    Leader b = join(board.campaign("b", LONG));
    assertThat(join(board.publish("a", a.token(), Map.of("x", bytes("stale"), "y", bytes("stale")), LONG)))
        .isFalse();
    // The right id with another's token, or the right token with another id: refused.
    assertThat(join(board.publish("b", a.token(), Map.of("x", bytes("wrong token")), LONG))).isFalse();
    assertThat(join(board.publish("a", b.token(), Map.of("x", bytes("wrong id")), LONG))).isFalse();
    assertThat(text(join(board.report("x", new byte[0], LONG)).sizes())).isEqualTo("from a");
    assertThat(join(board.report("y", new byte[0], LONG)).sizes()).isEmpty();
    assertThat(join(board.publish("b", b.token(), Map.of("x", bytes("from b")), LONG))).isTrue();
    assertThat(text(join(board.report("x", new byte[0], LONG)).sizes())).isEqualTo("from b");
  }

  @Test
  void resignEndsTheTermOnlyForTheRightToken() {
    LeaseBoard board = board();
    Leader a = join(board.campaign("a", LONG));
    join(board.resign("a", a.token() + 1));
    join(board.resign("b", a.token()));
    assertThat(leaderSeen(board)).extracting(Leader::instance, Leader::token).containsExactly("a", a.token());
    join(board.resign("a", a.token()));
    Leader none = leaderSeen(board);
    assertThat(none.instance()).isNull();
    assertThat(none.token()).isZero();
    assertThat(join(board.publish("a", a.token(), Map.of("x", bytes("after")), LONG))).isFalse();
    Leader b = join(board.campaign("b", LONG));
    assertThat(b.instance()).isEqualTo("b");
    assertThat(b.token()).isGreaterThan(a.token());
  }

  @Test
  void reportsReplaceExpireAndAreCounted() {
    LeaseBoard board = board();
    assertThat(join(board.report("a", bytes("a1"), shortMillis())).instances()).isEqualTo(1);
    assertThat(join(board.report("b", bytes("b1"), LONG)).instances()).isEqualTo(2);
    assertThat(join(board.report("a", bytes("a2"), shortMillis())).instances()).isEqualTo(2);
    Map<String, byte[]> all = join(board.reports(1 << 20));
    assertThat(all).containsOnlyKeys("a", "b");
    assertThat(text(all.get("a"))).isEqualTo("a2");
    assertThat(text(all.get("b"))).isEqualTo("b1");
    pass(shortMillis() + 50);
    assertThat(join(board.reports(1 << 20))).containsOnlyKeys("b");
    assertThat(join(board.report("b", bytes("b2"), LONG)).instances()).isEqualTo(1);
  }

  @Test
  void reportsAreReadUpToTheBytesAsked() {
    LeaseBoard board = board();
    for (String id : List.of("a", "b", "c")) {
      join(board.report(id, new byte[100], LONG));
    }
    assertThat(join(board.reports(250))).hasSize(2);
    assertThat(join(board.reports(300))).hasSize(3);
    assertThat(join(board.reports(99))).isEmpty();
  }

  @Test
  void sizesAreAnsweredWithTheirTimeAndExpire() {
    LeaseBoard board = board();
    ReportAnswer before = join(board.report("x", bytes("r"), LONG));
    assertThat(before.sizes()).isEmpty();
    assertThat(before.publishedAtMillis()).isZero();
    Leader a = join(board.campaign("a", LONG));
    assertThat(join(board.publish("a", a.token(), Map.of("x", bytes("7")), shortMillis()))).isTrue();
    ReportAnswer got = join(board.report("x", bytes("r"), LONG));
    assertThat(text(got.sizes())).isEqualTo("7");
    assertThat(got.publishedAtMillis()).isBetween(a.nowMillis(), got.leader().nowMillis());
    assertThat(got.leader()).extracting(Leader::instance, Leader::token).containsExactly("a", a.token());
    pass(shortMillis() + 50);
    ReportAnswer later = join(board.report("x", bytes("r"), LONG));
    assertThat(later.sizes()).isEmpty();
    assertThat(later.publishedAtMillis()).isZero();
  }

  @Test
  void anOversizeReportOrSizesAreRefusedNamingTheSizeAndTheLimit() {
    LeaseBoard board = board();
    byte[] big = new byte[LeaseBoard.MAX_ENTRY_BYTES + 1];
    assertThatThrownBy(() -> join(board.report("a", big, LONG)))
        .hasRootCauseInstanceOf(IllegalArgumentException.class)
        .rootCause().hasMessageContaining("8193 bytes").hasMessageContaining("8192 bytes");
    assertThat(join(board.reports(1 << 20))).isEmpty();
    Leader a = join(board.campaign("a", LONG));
    assertThatThrownBy(() -> join(board.publish("a", a.token(), Map.of("x", bytes("ok"), "y", big), LONG)))
        .hasRootCauseInstanceOf(IllegalArgumentException.class)
        .rootCause().hasMessageContaining("8193 bytes").hasMessageContaining("8192 bytes");
    assertThat(join(board.report("x", new byte[0], LONG)).sizes()).isEmpty();
    // At the limit exactly: kept.
    assertThat(join(board.report("a", new byte[LeaseBoard.MAX_ENTRY_BYTES], LONG)).instances()).isEqualTo(2);
  }

  @Test
  void badArgumentsAreRefusedNamingThem() {
    LeaseBoard board = board();
    assertThatThrownBy(() -> join(board.campaign("", LONG))).rootCause()
        .hasMessageContaining("an instance id is 1 to 256 bytes, was 0");
    assertThatThrownBy(() -> join(board.campaign("a", 0))).rootCause()
        .hasMessageContaining("the term must be 1 to 86400000 ms (a day), was 0");
    assertThatThrownBy(() -> join(board.report("a", new byte[1], -5))).rootCause()
        .hasMessageContaining("the report ttl must be 1 to 86400000 ms (a day), was -5");
    assertThatThrownBy(() -> join(board.publish("a", 1, java.util.Map.of(), Long.MAX_VALUE))).rootCause()
        .hasMessageContaining("the sizes ttl must be 1 to 86400000 ms (a day), was " + Long.MAX_VALUE);
    assertThatThrownBy(() -> join(board.report("@", new byte[1], 10))).rootCause()
        .hasMessageContaining("\"@\" is reserved");
  }
}
