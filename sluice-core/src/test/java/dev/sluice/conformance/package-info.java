/**
 * The conformance suite every store passes, shipped in the {@code sluice-core} test-jar.
 *
 * <p>A store runs it by subclassing each abstract class with a factory:
 *
 * <pre>{@code
 * class RedisTransactionTest extends TransactionConformanceTest {
 *   @Override
 *   protected Store newStore() {
 *     return RedisStore.connect(server.uri());
 *   }
 * }
 * }</pre>
 *
 * <ul>
 *   <li>{@link dev.sluice.conformance.AlgorithmTracesConformanceTest} — scripted traces with every
 *       number each algorithm must report, and the SPEC multi-window scenario;
 *   <li>{@link dev.sluice.conformance.TransactionConformanceTest} — all or nothing across items,
 *       shadow rules, peeks, costs above a limit, repeated items;
 *   <li>{@link dev.sluice.conformance.KeysAndRulesConformanceTest} — overrides, reset, keys of any
 *       characters, rule changes, time going backwards;
 *   <li>{@link dev.sluice.conformance.ConcurrencyConformanceTest} — sixteen threads, exact answers
 *       per round, bounds on the store's own clock (override {@code storeClock()} to run it); and
 *       several limiters on one store with bans and audit on, each round's admissions, denials and
 *       bans as an exact model says (override {@code storeForInstance(int)} to give each limiter
 *       a client of its own);
 *   <li>{@link dev.sluice.conformance.AlgorithmBoundProperties} (jqwik) — random traces compared
 *       decision by decision with exact models ({@link dev.sluice.conformance.Oracles}) and
 *       checked against each SPEC §3 bound ({@link dev.sluice.conformance.Bounds}).
 * </ul>
 *
 * <p>Requests carry explicit times, so a store deciding on a server's clock gives the same
 * numbers as the memory store. Rule names are unique per test and nothing is reset globally, so
 * suites can share one server. A store that cannot do something overrides
 * {@code supports(Algorithm)} or {@code clampsTimePerKey()}; the tests concerned are then skipped
 * with a reported assumption, never passed silently. The store's module needs, with test scope,
 * the {@code sluice-core} test-jar, JUnit Jupiter, AssertJ and jqwik.
 */
package dev.sluice.conformance;
