package dev.sluice.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.BanPolicy;
import dev.sluice.Decision;
import dev.sluice.DenyReason;
import dev.sluice.ItemDecision;
import dev.sluice.OperationRequest;
import dev.sluice.RateLimiter;
import dev.sluice.Rule;
import dev.sluice.conformance.Oracles.Oracle;
import dev.sluice.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntToLongFunction;
import java.util.stream.Collectors;

/**
 * Contention with bans and audit on, and a known answer. Several limiters over one store (each an
 * instance of its own, as processes sharing a Redis are) and many threads, each on one of them,
 * send rounds of requests of one operation: an item of the rule that bans, keyed by {@code ip},
 * one of a rule that audits {@code device}, keyed by {@code user}, and one global item. Every
 * request of a round carries the round's explicit time, and the limiters' clock is set to it, so
 * that a ban a limiter caches ends when the store's does.
 *
 * <p>Only the rule that bans can deny (the others have room for every request), so each of its
 * keys is decided as if alone: in a round, the requests that fit are admitted, then each denial is
 * counted toward the ban, and the one that reaches the ban's threshold starts it, so the rest are
 * banned. However the threads interleave, an exact model says how many of each a round gets.
 */
final class PolicyRounds {
  private PolicyRounds() {}

  /** One request: its round, attributes, and the store's answer for the item of the rule that bans. */
  record Call(int round, String ip, String user, String device, boolean allowed, DenyReason reason) {}

  /** What the model saw over a run: requests admitted, bans started, rounds a key was banned from the start. */
  record Summary(long admitted, int bansStarted, int bannedRounds) {}

  /**
   * Runs {@code rounds} rounds; in each, thread {@code t} uses limiter {@code t % limiters.size()}
   * and sends up to {@code maxPerThread} requests (a random number), each with an {@code ip} drawn
   * from {@code ips}, the user {@code "u" + t % users} and a device unique to the round.
   */
  static List<Call> run(List<RateLimiter> limiters, FakeTicker clock, String operation, String banningRule,
      int threads, int rounds, int maxPerThread, List<String> ips, int users, IntToLongFunction timeOfRound)
      throws InterruptedException {
    AtomicInteger next = new AtomicInteger();
    CyclicBarrier barrier = new CyclicBarrier(threads,
        () -> clock.setMicros(timeOfRound.applyAsLong(next.getAndIncrement())));
    ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
    Threads.runAll(threads, Duration.ofSeconds(60), thread -> {
      RateLimiter limiter = limiters.get(thread % limiters.size());
      ThreadLocalRandom random = ThreadLocalRandom.current();
      List<Call> mine = new ArrayList<>();
      String user = "u" + thread % users;
      for (int r = 0; r < rounds; r++) {
        // Every thread has finished round r − 1, and the clock reads round r, before any starts it.
        barrier.await();
        long t = timeOfRound.applyAsLong(r);
        int n = random.nextInt(maxPerThread + 1);
        for (int j = 0; j < n; j++) {
          String ip = ips.get(random.nextInt(ips.size()));
          String device = "r" + r + "." + (thread / users) % 2;
          Decision d = limiter.acquire(OperationRequest.builder(operation).attribute("ip", ip)
              .attribute("user", user).attribute("device", device).build().atMicros(t));
          ItemDecision banning = d.items().stream().filter(i -> i.rule().equals(banningRule)).findFirst()
              .orElseThrow(() -> new AssertionError("no item of " + banningRule + " in " + d));
          mine.add(new Call(r, ip, user, device, d.allowed(), banning.reason()));
        }
      }
      calls.addAll(mine);
    });
    return new ArrayList<>(calls);
  }

  /**
   * Checks every round of every {@code ip} against the model of {@code rule} (keys {@code "ip:" +
   * ip}) and its ban. With {@code exactBans} false, denials decided while the one that reached the
   * threshold was being counted may be reported as a limit exceeded rather than banned; the ban
   * still starts at that round's time and nothing else changes.
   */
  static Summary assertEachRoundAsTheModelSays(Rule rule, List<Call> calls, IntToLongFunction timeOfRound,
      boolean exactBans) {
    BanPolicy ban = rule.ban();
    long within = ban.within().toNanos() / 1000;
    long duration = ban.duration().toNanos() / 1000;
    long admittedTotal = 0;
    int bansStarted = 0;
    int bannedRounds = 0;
    for (Map.Entry<String, TreeMap<Integer, List<Call>>> byIp : byKeyAndRound(calls).entrySet()) {
      String ip = byIp.getKey();
      Oracle rate = Oracles.of(rule, "ip:" + ip);
      long banUntil = Long.MIN_VALUE;
      long countFrom = 0;
      long counted = 0;
      StringBuilder history = new StringBuilder();
      for (Map.Entry<Integer, List<Call>> round : byIp.getValue().entrySet()) {
        List<Call> in = round.getValue();
        long t = timeOfRound.applyAsLong(round.getKey());
        for (Call c : in) {
          assertThat(c.allowed()).as("the request is admitted exactly when the item that bans is: %s", c)
              .isEqualTo(c.reason() == DenyReason.NONE);
        }
        long admitted = in.stream().filter(Call::allowed).count();
        long exceeded = in.stream().filter(c -> c.reason() == DenyReason.LIMIT_EXCEEDED).count();
        long banned = in.stream().filter(c -> c.reason() == DenyReason.BANNED).count();
        String at = String.format("ip %s, round %d at %d µs, %d requests, %d denials counted before, banned until %d;"
            + " rounds before (admitted/limit_exceeded/banned):%s", ip, round.getKey(), t, in.size(), counted, banUntil,
            history);
        history.append(String.format(" %d: %d/%d/%d", round.getKey(), admitted, exceeded, banned));
        assertThat(admitted + exceeded + banned).as("%s: admitted, limit_exceeded or banned", at).isEqualTo(in.size());
        long expectAdmitted = 0;
        long expectDenied = 0;
        boolean starts = false;
        if (t < banUntil) {
          bannedRounds++;
        } else {
          for (int i = 0; i < in.size() && !starts; i++) {
            if (rate.decide(t, 1).allowed()) {
              expectAdmitted++;
              continue;
            }
            // Counted in a period opened by the first denial counted; a ban starts the count afresh.
            if (counted == 0 || t >= countFrom + within) {
              countFrom = t;
              counted = 0;
            }
            counted++;
            expectDenied++;
            if (counted == ban.after()) {
              starts = true;
              banUntil = t + duration;
              counted = 0;
              bansStarted++;
            }
          }
        }
        assertThat(admitted).as("%s: admitted", at).isEqualTo(expectAdmitted);
        if (exactBans || !starts) {
          assertThat(exceeded).as("%s: denied by the limit, each counted toward the ban", at).isEqualTo(expectDenied);
        } else {
          assertThat(exceeded).as("%s: denied by the limit before the ban was seen", at)
              .isGreaterThanOrEqualTo(expectDenied);
        }
        admittedTotal += admitted;
      }
    }
    return new Summary(admittedTotal, bansStarted, bannedRounds);
  }

  private static Map<String, TreeMap<Integer, List<Call>>> byKeyAndRound(List<Call> calls) {
    return calls.stream().collect(Collectors.groupingBy(Call::ip, TreeMap::new,
        Collectors.groupingBy(Call::round, TreeMap::new, Collectors.toList())));
  }

  /**
   * Checks a user's audit list, newest first, against the devices of its admitted requests: each
   * round's devices are the round's own, so the list is the latest rounds' devices, a round's in
   * any order (its requests raced), newer rounds first, until {@code keep} values.
   */
  static void assertAuditHoldsTheLastDistinctValues(String user, List<String> audit, int keep, List<Call> calls) {
    TreeMap<Integer, Set<String>> admittedByRound = new TreeMap<>(Comparator.reverseOrder());
    for (Call c : calls) {
      if (c.user().equals(user) && c.allowed()) {
        admittedByRound.computeIfAbsent(c.round(), r -> new HashSet<>()).add(c.device());
      }
    }
    int at = 0;
    for (Map.Entry<Integer, Set<String>> round : admittedByRound.entrySet()) {
      if (at == keep) {
        break;
      }
      Set<String> devices = round.getValue();
      int take = Math.min(devices.size(), keep - at);
      assertThat(audit.size()).as("audit of %s: %s", user, audit).isGreaterThanOrEqualTo(at + take);
      List<String> part = audit.subList(at, at + take);
      assertThat(devices).as("audit of %s, from %d: %s, of round %d", user, at, audit, round.getKey())
          .containsAll(part);
      assertThat(new HashSet<>(part)).as("audit of %s: distinct values", user).hasSize(take);
      at += take;
    }
    assertThat(audit).as("audit of %s", user).hasSize(at);
  }
}
