/**
 * Test helpers shipped in the {@code sluice-core} test-jar: {@link dev.sluice.testing.FakeTicker}
 * (a hand-moved clock that is also a {@link dev.sluice.Sleeper}) and
 * {@link dev.sluice.testing.FlakyStore} (a store that fails the ways a network store fails).
 */
package dev.sluice.testing;
