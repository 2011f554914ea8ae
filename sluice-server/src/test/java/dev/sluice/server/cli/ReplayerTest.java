package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.Item;

import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.memory.MemoryStore;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReplayerTest {

  @Test
  void memoryStaysBoundedOverManyKeys() {
    RuleSet rules = RuleSet.of(Rule.builder("r").window(2, Duration.ofSeconds(1)).build());
    ReplayClock clock = new ReplayClock();
    MemoryStore store = MemoryStore.builder().ticker(clock).build();
    StringWriter out = new StringWriter();
    try (RateLimiter limiter = Sluice.builder().rules(rules).store(store).ticker(clock).build()) {
      Replayer replayer = new Replayer(limiter, store, clock, new PrintWriter(out), true, rules, null);
      // 300,000 requests at 1,000/s over 100,000 keys: each key is live for one second at a time.
      new SyntheticTrace(300_000, 100_000, 1000, List.of("r"), 3).forEach(replayer);
      replayer.finish();
    }
    // About 1,000 keys were touched in the last second; without sweeps it would be ~95,000.
    assertThat(store.size()).isLessThan(5_000);
    assertThat(out.toString()).startsWith("{\"summary\":{\"requests\":300000,");
  }

  @Test
  void aBadKeyInALineOfSeveralItemsNamesTheItem() {
    RuleSet rules = RuleSet.of(Rule.builder("r").window(2, Duration.ofSeconds(1)).build());
    ReplayClock clock = new ReplayClock();
    try (RateLimiter limiter = Sluice.builder().rules(rules).ticker(clock).build()) {
      Replayer replayer = new Replayer(limiter, null, clock, new PrintWriter(new StringWriter()), true, rules, "t.jsonl");
      assertThatThrownBy(() -> replayer.accept(0, List.of(Item.of("r", "a"), Item.of("r", "")), 7))
          .isInstanceOf(CliException.class).hasMessage("t.jsonl:7: item 2: key must not be empty (rule 'r')");
      assertThatThrownBy(() -> replayer.accept(0, List.of(Item.of("r", "")), 8))
          .isInstanceOf(CliException.class).hasMessage("t.jsonl:8: key must not be empty (rule 'r')");
    }
  }
}
