package dev.sluice.testing.leaky;

import dev.sluice.testing.leaky.hidden.HiddenValue;

/** Not public, so not API: its public members may name anything. */
final class NotApi {
  public HiddenValue value() {
    return null;
  }
}
