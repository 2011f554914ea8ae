package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.spi.PolicyChanges;
import dev.sluice.spi.PolicyKind;
import dev.sluice.spi.PolicyRecord;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** The memory store's policy records: versions, the change log, paging, expiry, denial sketches. */
class MemoryPolicyStoreTest {
  final FakeTicker ticker = new FakeTicker();
  final MemoryPolicyStore store = new MemoryPolicyStore(ticker);

  static <T> T join(CompletionStage<T> s) {
    return s.toCompletableFuture().join();
  }

  PolicyRecord limit(String rule, String key) {
    return new PolicyRecord(PolicyKind.LIMIT, rule, key, "tier:gold", 0);
  }

  @Test
  void everyChangeIncreasesTheVersionAndTheFeedSaysWhatChanged() {
    assertThat(join(store.version())).isZero();
    assertThat(join(store.put(limit("r", "a")))).isEqualTo(1);
    assertThat(join(store.put(limit("r", "b")))).isEqualTo(2);
    assertThat(join(store.remove(PolicyKind.LIMIT, "r", "a"))).isTrue();
    assertThat(join(store.remove(PolicyKind.LIMIT, "r", "a"))).isFalse();
    assertThat(join(store.version())).isEqualTo(3);

    PolicyChanges all = join(store.changesSince(0));
    assertThat(all.complete()).isTrue();
    assertThat(all.version()).isEqualTo(3);
    assertThat(all.changed()).containsExactly(limit("r", "b"));
    assertThat(all.removed()).extracting(PolicyRecord::key).containsExactly("a");
    assertThat(join(store.changesSince(3)).changed()).isEmpty();
  }

  @Test
  void aReaderOlderThanTheLastTenThousandChangesIsToldToReadEverything() {
    for (int i = 0; i <= MemoryPolicyStore.MAX_CHANGES; i++) {
      join(store.put(limit("r", "k" + (i % 10))));
    }
    assertThat(join(store.changesSince(0)).complete()).isFalse();
    assertThat(join(store.changesSince(1)).complete()).isTrue();
    assertThat(join(store.changesSince(1)).changed()).hasSize(10);
    assertThat(join(store.changesSince(99_999)).complete()).as("a version this store never had").isFalse();
  }

  @Test
  void pagesAreOrderedByRuleThenKeyAsUtf8Bytes() {
    List<String> keys = List.of("b", "a", "\uFFFD", "\uD83D\uDE00", "ab", "A");
    for (String k : keys) {
      join(store.put(limit("r", k)));
    }
    join(store.put(limit("q", "z")));
    join(store.put(limit("r2", "a")));
    List<String> seen = new ArrayList<>();
    String after = null;
    while (true) {
      List<PolicyRecord> page = join(store.page(PolicyKind.LIMIT, "r", after, 4));
      page.forEach(r -> seen.add(r.key()));
      if (page.size() < 4) {
        break;
      }
      after = page.get(page.size() - 1).cursor();
    }
    // U+FFFD is EF BF BD in UTF-8, U+1F600 is F0 9F 98 80: the emoji sorts last, unlike in UTF-16.
    assertThat(seen).containsExactly("A", "a", "ab", "b", "\uFFFD", "\uD83D\uDE00");
    assertThat(join(store.page(PolicyKind.LIMIT, null, null, 100))).extracting(PolicyRecord::cursor)
        .startsWith("q z").endsWith("r2 a");
  }

  @Test
  void anExpiredRecordIsGoneAndItsRemovalIsAChange() {
    long now = ticker.nowMicros() / 1000;
    join(store.put(new PolicyRecord(PolicyKind.BAN, "r", "k", "manual", now + 1000)));
    assertThat(join(store.get(PolicyKind.BAN, "r", "k"))).isPresent();
    ticker.advance(Duration.ofSeconds(1));
    assertThat(join(store.get(PolicyKind.BAN, "r", "k"))).isEmpty();
    PolicyChanges c = join(store.changesSince(1));
    assertThat(c.removed()).extracting(PolicyRecord::key).containsExactly("k");
    assertThat(store.size()).isZero();
  }

  @Test
  void banRecordsAreToldToTheDecisionSide() {
    List<String> told = new ArrayList<>();
    store.banListener(new MemoryPolicyStore.BanListener() {
      @Override
      public void banned(String rule, String key, long untilMicros) {
        told.add("ban " + key + " " + untilMicros);
      }

      @Override
      public void lifted(String rule, String key) {
        told.add("lift " + key);
      }
    });
    join(store.put(new PolicyRecord(PolicyKind.BAN, "r", "k", "manual", 1_800_000_000_000L)));
    join(store.remove(PolicyKind.BAN, "r", "never-banned"));
    assertThat(told).containsExactly("ban k 1800000000000000", "lift never-banned");
  }

  @Test
  void denialSketchesAreKeptAnHourAndMergedWhenAMergeIsGiven() {
    long minute = ticker.nowMicros() / 60_000_000L;
    join(store.addDenials("r", minute, "a"));
    join(store.addDenials("r", minute, "b"));
    assertThat(join(store.denials("r", minute, minute))).containsExactly("a", "b");
    store.denialMerge((x, y) -> x + y);
    join(store.addDenials("r", minute + 1, "c"));
    join(store.addDenials("r", minute + 1, "d"));
    assertThat(join(store.denials("r", minute, minute + 1))).containsExactly("a", "b", "cd");
    ticker.advance(Duration.ofMinutes(61));
    assertThat(join(store.denials("r", minute, minute + 1))).isEmpty();
  }
}
