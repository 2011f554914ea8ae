package dev.sluice.server.rlqs;

/**
 * The rate each consumer of a (rule, key) — one Envoy stream's bucket — may admit, in proportion
 * to its demand: rₛ = (L ÷ P) × dₛ ÷ Σd. Behind an interface because the consumers this service
 * sees are not all of them: streams held by other instances count too, and their demand is to
 * come from the leader of leased mode.
 */
interface ConsumerRates {

  /** A (rule, key) that consumers share. */
  record Limit(String rule, String key) {}

  /** Consumer {@code id} starts drawing on {@code limit}, with no demand known yet. */
  void join(Limit limit, long id);

  /**
   * One report of consumer {@code id}: (allowed + denied) ÷ elapsed, in units per second. The
   * demand is its exponential average, α = 0.5 per report (the first report sets it).
   */
  void report(Limit limit, long id, double demand);

  /** Consumer {@code id} no longer draws on {@code limit} (silent, abandoned, stream closed). */
  void leave(Limit limit, long id);

  /**
   * The rate of consumer {@code id} of {@code limit}, whose whole rate is {@code whole} units per
   * second: its share of the demand, or — while its own demand is unknown, or nobody's is above
   * 0 — the whole rate ÷ the consumers.
   */
  double rate(Limit limit, long id, double whole);
}
