/**
 * One class per rate-limiting algorithm ({@link dev.sluice.algorithm.SlidingLog},
 * {@link dev.sluice.algorithm.SlidingWindow}, {@link dev.sluice.algorithm.FixedWindow},
 * {@link dev.sluice.algorithm.TokenBucket}, {@link dev.sluice.algorithm.LeakyBucket}), each the
 * per-key state that decides for the memory store, and the arithmetic the Redis store shares
 * with it (the numbers its script is given for a rule, the report on a value it read); their base
 * {@link dev.sluice.algorithm.KeyState} (lock, time, report) and scratch space
 * {@link dev.sluice.algorithm.Eval}; {@link dev.sluice.algorithm.Heap}, the byte sizes the memory
 * store counts. Not an API: only the memory and Redis stores use it.
 */
package dev.sluice.algorithm;
