package dev.sluice;

import dev.sluice.conformance.AddressRefusedAgainContract;
import dev.sluice.testing.FakeTicker;

/** {@link AddressRefusedAgainContract} on the default store. */
class AddressRefusedAgainOnMemoryTest extends AddressRefusedAgainContract {
  @Override
  protected RateLimiter limiter(RuleSet rules) {
    FakeTicker ticker = new FakeTicker();
    return Sluice.builder().rules(rules).ticker(ticker).sleeper(ticker).build();
  }
}
