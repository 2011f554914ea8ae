package dev.sluice.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.AuditPolicy;
import dev.sluice.BanPolicy;
import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.Operation;
import dev.sluice.OperationItem;
import dev.sluice.OperationRequest;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.RuleSet;
import dev.sluice.Sluice;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.Batch;
import dev.sluice.spi.PolicyKind;
import dev.sluice.spi.PolicyRecord;
import dev.sluice.spi.DenialSketches;
import dev.sluice.spi.Membership;
import dev.sluice.spi.PolicyRecords;
import dev.sluice.spi.ResolvedItem;
import dev.sluice.spi.Store;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** What the limiter does around the store: bans it learns, audit values it passes, denials it counts. */
class EngineLocalStepTest {
  final FakeTicker ticker = new FakeTicker();

  /** A memory store that records the batches it is given and can answer BANNED for one key. */
  static final class Recording implements Store {
    final MemoryStore inner;
    final List<Batch> batches = new CopyOnWriteArrayList<>();
    volatile String bannedKey;
    volatile long bannedMs;

    Recording(MemoryStore inner) {
      this.inner = inner;
    }

    @Override
    public CompletionStage<List<ItemDecision>> decide(Batch batch) {
      return CompletableFuture.completedFuture(decideSync(batch));
    }

    @Override
    public List<ItemDecision> decideSync(Batch batch) {
      batches.add(batch);
      List<ItemDecision> out = new ArrayList<>();
      for (ResolvedItem it : batch.items()) {
        if (it.key().equals(bannedKey)) {
          out.add(new ItemDecision(it.rule().name(), it.key(), it.cost(), false, DenyReason.BANNED, 0, List.of(),
              it.rule().shadow(), bannedMs));
        }
      }
      return out.isEmpty() ? inner.decideSync(batch) : out;
    }

    @Override
    public boolean isLocal() {
      return true;
    }

    @Override
    public Optional<PolicyRecords> records() {
      return inner.records();
    }

    @Override
    public Optional<DenialSketches> sketches() {
      return inner.sketches();
    }

    @Override
    public Optional<Membership> membership() {
      return inner.membership();
    }

    @Override
    public CompletionStage<Void> reset(String rule, String key) {
      return inner.reset(rule, key);
    }

    @Override
    public CompletionStage<Boolean> ping() {
      return inner.ping();
    }

    @Override
    public String describe() {
      return "recording";
    }

    @Override
    public void close() {
      inner.close();
    }
  }

  final Rule login = Rule.builder("login").window(1, Duration.ofSeconds(10))
      .ban(new BanPolicy(3, Duration.ofMinutes(1), Duration.ofSeconds(30)))
      .audit(new AuditPolicy(5, "user")).build();
  final RuleSet rules = RuleSet.of(login).withOperations(
      List.of(Operation.of("signin", OperationItem.of("login", "ip:{ip}"))), List.of());
  final Recording store = new Recording(MemoryStore.builder().ticker(ticker).build());
  final RateLimiter limiter = Sluice.builder().rules(rules).store(store).ticker(ticker).sleeper(ticker).build();

  @Test
  void aBanTheStoreAnswersIsCachedUntilItEndsAndRecordedOnce() {
    store.bannedKey = "ip:1";
    store.bannedMs = 30_000;
    List<String> counted = new CopyOnWriteArrayList<>();
    ((Engine) limiter).denialRecorder((rule, key, at) -> counted.add(rule + " " + key));

    Decision first = limiter.acquire("login", "ip:1");
    assertThat(first.items().get(0).reason()).isEqualTo(DenyReason.BANNED);
    assertThat(first.retryAfterMs()).isEqualTo(30_000);
    assertThat(store.batches).hasSize(1);

    ticker.advance(Duration.ofSeconds(10));
    Decision cached = limiter.acquire("login", "ip:1");
    assertThat(cached.items().get(0).reason()).isEqualTo(DenyReason.BANNED);
    assertThat(cached.retryAfterMs()).isEqualTo(20_000);
    assertThat(limiter.tryAcquire("login", "ip:1")).isFalse();
    assertThat(store.batches).as("no store call while the ban is cached").hasSize(1);

    Optional<PolicyRecord> record = store.records().orElseThrow().get(PolicyKind.BAN, "login", "ip:1").toCompletableFuture().join();
    assertThat(record).isPresent();
    assertThat(record.get().value()).isEqualTo("automatic");
    assertThat(record.get().expiresAtMillis()).isEqualTo(ticker.nowMicros() / 1000 + 20_000);
    assertThat(store.inner.policies().currentVersion()).isEqualTo(1);
    assertThat(counted).containsExactly("login ip:1", "login ip:1", "login ip:1");

    store.bannedKey = null;
    ticker.advance(Duration.ofSeconds(20));
    assertThat(limiter.acquire("login", "ip:1").allowed()).isTrue();
    assertThat(store.batches).hasSize(2);
  }

  @Test
  void acquireBlockingByOperationKeepsTheAuditValueOnEveryTry() throws InterruptedException {
    OperationRequest req = OperationRequest.of("signin", Map.of("ip", "10.0.0.1", "user", "42"));
    assertThat(limiter.acquire(req).allowed()).isTrue();
    Decision d = limiter.acquireBlocking(req, Duration.ofSeconds(20));
    assertThat(d.allowed()).isTrue();
    assertThat(store.batches).hasSize(3);
    assertThat(store.batches).allSatisfy(b -> assertThat(b.items().get(0).audit()).isEqualTo("42"));
  }

  @Test
  void aRequestByItemsCarriesNoAuditValue() {
    limiter.acquire("login", "ip:10.0.0.1");
    assertThat(store.batches.get(0).items().get(0).audit()).isNull();
  }
}
