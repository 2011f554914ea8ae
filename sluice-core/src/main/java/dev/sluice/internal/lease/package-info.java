/**
 * Leased mode's leader side: the sizes it publishes per instance and key ({@link
 * dev.sluice.internal.lease.ProportionalShare}), and the share an instance uses while no leader
 * publishes. See docs/scaling.md, "The leader".
 */
package dev.sluice.internal.lease;
