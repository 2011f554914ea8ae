/**
 * The client of {@code sluice serve}: {@link dev.sluice.client.SluiceClient} is a
 * {@link dev.sluice.RateLimiter} whose store is one or more running services, reached over their
 * HTTP JSON API with Armeria's client, each key on one instance. Armeria names itself as an
 * automatic module ({@code Automatic-Module-Name}), which is why the warnings are suppressed.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module dev.sluice.client {
  requires transitive dev.sluice.core;
  requires com.linecorp.armeria;
  requires com.fasterxml.jackson.core;
  requires com.fasterxml.jackson.databind;
  requires io.netty.common;

  exports dev.sluice.client;
}
