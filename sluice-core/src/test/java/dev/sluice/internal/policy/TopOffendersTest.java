package dev.sluice.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.policy.Offender;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Top offenders through the limiter: a replayed trace's exact denial counts against the sketch's answer. */
class TopOffendersTest {
  final FakeTicker ticker = new FakeTicker(1_800_000_000_000_000L);
  final MemoryStore store = MemoryStore.builder().ticker(ticker).build();
  final Rule perIp = Rule.builder("per_ip").window(1, Duration.ofHours(1)).build();
  final Rule other = Rule.builder("other").window(1, Duration.ofHours(1)).build();
  final RateLimiter a = limiter();
  final RateLimiter b = limiter();

  RateLimiter limiter() {
    return Sluice.builder().rules(RuleSet.of(perIp, other)).store(store).ticker(ticker).sleeper(ticker).build();
  }

  @AfterEach
  void close() {
    a.close();
    b.close();
  }

  @Test
  void theMostDeniedKeysOfATraceAcrossTwoLimitersAreWithinTheSketchBound() {
    // A skewed trace over 3 minutes, split between two limiters: a few heavy keys and a long tail,
    // more distinct keys than the sketch holds. Every key's first request is admitted (limit 1 an
    // hour), each later one denied.
    Random random = new Random(7);
    Map<String, Long> denials = new HashMap<>();
    Map<String, Integer> seen = new HashMap<>();
    long total = 0;
    for (int minute = 0; minute < 3; minute++) {
      for (int i = 0; i < 3_000; i++) {
        int r = random.nextInt(100);
        String key = r < 30 ? "ip:heavy" + random.nextInt(3) : r < 50 ? "ip:mid" + random.nextInt(20)
            : "ip:tail" + random.nextInt(1_000);
        RateLimiter via = random.nextBoolean() ? a : b;
        boolean allowed = via.acquire("per_ip", key).allowed();
        assertThat(allowed).isEqualTo(seen.merge(key, 1, Integer::sum) == 1);
        if (!allowed) {
          denials.merge(key, 1L, Long::sum);
          total++;
        }
        ticker.advanceMillis(15);
      }
      ticker.advance(Duration.ofSeconds(15));
    }
    b.acquire("other", "x");
    b.acquire("other", "x");

    List<Offender> top = a.policies().top("per_ip", Duration.ofMinutes(5), 10).toCompletableFuture().join();
    // b's last second is not flushed yet: a's answer holds what b handed over; b's own answer, all.
    List<Offender> all = b.policies().top("per_ip", Duration.ofMinutes(5), 10).toCompletableFuture().join();
    for (List<Offender> answer : List.of(all)) {
      long bound = total / DenialSketch.DEFAULT_CAPACITY;
      assertThat(answer).hasSize(10);
      assertThat(answer.subList(0, 3)).extracting(Offender::key)
          .containsExactlyInAnyOrder("ip:heavy0", "ip:heavy1", "ip:heavy2");
      for (Offender o : answer) {
        long truth = denials.getOrDefault(o.key(), 0L);
        assertThat(o.denials()).as(o.key()).isBetween(truth, truth + bound);
        assertThat(o.denials() - o.error()).as(o.key()).isLessThanOrEqualTo(truth);
      }
      denials.forEach((key, n) -> {
        if (n > bound && n > answer.get(answer.size() - 1).denials()) {
          assertThat(answer).extracting(Offender::key).contains(key);
        }
      });
    }
    assertThat(top).extracting(Offender::key).containsAnyOf("ip:heavy0", "ip:heavy1", "ip:heavy2");
    assertThat(b.policies().top("other", Duration.ofMinutes(1), 5).toCompletableFuture().join())
        .containsExactly(new Offender("x", 1, 0));
  }

  @Test
  void minutesOutsideTheRangeAskedForAreLeftOut() {
    a.acquire("per_ip", "ip:old");
    a.acquire("per_ip", "ip:old");
    ticker.advance(Duration.ofMinutes(10));
    a.acquire("per_ip", "ip:new");
    a.acquire("per_ip", "ip:new");
    assertThat(a.policies().top("per_ip", Duration.ofMinutes(5), 10).toCompletableFuture().join())
        .containsExactly(new Offender("ip:new", 1, 0));
    assertThat(a.policies().top("per_ip", Duration.ofMinutes(15), 10).toCompletableFuture().join())
        .extracting(Offender::key).containsExactly("ip:new", "ip:old");
  }

  @Test
  void aBadRangeIsRefusedNamingIt() {
    assertThatThrownBy(() -> a.policies().top("per_ip", Duration.ofMinutes(61), 10).toCompletableFuture().join())
        .isInstanceOf(CompletionException.class).hasMessageContaining("1 to 60");
    assertThatThrownBy(() -> a.policies().top("nope", Duration.ofMinutes(5), 10).toCompletableFuture().join())
        .isInstanceOf(CompletionException.class).hasMessageContaining("nope");
  }
}
