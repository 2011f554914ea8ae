package dev.sluice.testing.leaky.hidden;

/** A type of the fixture's internal package. */
public final class HiddenValue {}
