package dev.sluice.server.rlqs;

import dev.sluice.Rule;
import dev.sluice.Ticker;
import dev.sluice.Window;
import dev.sluice.internal.log.ThrottledLog;
import dev.sluice.server.config.ServiceConfig;
import dev.sluice.spi.Grants;
import dev.sluice.spi.ResolvedItem;
import io.micrometer.core.instrument.Counter;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What every stream of the service shares: the configuration, the store's grants, the rates, the clock. */
final class RlqsContext {
  private static final Logger LOG = LoggerFactory.getLogger(RateLimitQuotaService.class);
  /**
   * How long a stream waits for a take. A store's stages end within its own timeouts; this bound
   * only keeps a stream from waiting forever on one that does not.
   */
  static final long TAKE_TIMEOUT_MILLIS = 5_000;

  private final Supplier<ServiceConfig> config;
  private final Grants grants;
  private final ConsumerRates rates;
  private final Ticker ticker;
  private final Counter unmatched;
  private final ThrottledLog log = new ThrottledLog(LOG::warn);

  RlqsContext(Supplier<ServiceConfig> config, Grants grants, ConsumerRates rates, Ticker ticker, Counter unmatched) {
    this.config = config;
    this.grants = grants;
    this.rates = rates;
    this.ticker = ticker;
    this.unmatched = unmatched;
  }

  ServiceConfig config() {
    return config.get();
  }

  ConsumerRates rates() {
    return rates;
  }

  long now() {
    return ticker.nowMicros();
  }

  void countUnmatched() {
    unmatched.increment();
  }

  /**
   * Takes up to {@code units} of {@code rule}'s {@code key} from the store's exact state and
   * answers how many it granted; 0 when the store failed or did not answer in time (a take that
   * answers later is given back on arrival).
   */
  long take(Rule rule, String key, List<Window> windows, long units) {
    ResolvedItem item = new ResolvedItem(rule, key, 1, windows);
    CompletableFuture<Grants.Grant> f = grants.take(item, units).toCompletableFuture();
    try {
      return f.get(TAKE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS).units();
    } catch (TimeoutException e) {
      f.thenAccept(g -> {
        if (g.units() > 0) {
          grants.giveBack(item, g, g.units());
        }
      });
      log.log("take-timeout", () -> "rlqs: a take for rule " + rule.name() + " did not answer within "
          + TAKE_TIMEOUT_MILLIS + " ms; its assignment is what the units held cover");
      return 0;
    } catch (ExecutionException e) {
      log.log("take-failed", () -> "rlqs: a take for rule " + rule.name() + " failed (" + e.getCause()
          + "); its assignment is what the units held cover");
      return 0;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 0;
    }
  }
}
