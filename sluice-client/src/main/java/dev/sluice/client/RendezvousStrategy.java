package dev.sluice.client;

import com.linecorp.armeria.client.ClientRequestContext;
import com.linecorp.armeria.client.Endpoint;
import com.linecorp.armeria.client.endpoint.AbstractEndpointSelector;
import com.linecorp.armeria.client.endpoint.EndpointGroup;
import com.linecorp.armeria.client.endpoint.EndpointSelectionStrategy;
import com.linecorp.armeria.client.endpoint.EndpointSelector;
import io.netty.util.AttributeKey;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Picks, for a request's routing key, the endpoint with the highest score of hash(endpoint, key)
 * among the endpoints the group holds now (rendezvous, or highest-random-weight, hashing).
 *
 * <p>Each endpoint's score of a key depends on that endpoint and that key alone, so when an
 * endpoint leaves the group only the keys it won move (each to its runner-up), and when it comes
 * back only those keys return. Armeria's own {@code sticky} strategy maps a hash onto the index
 * of the endpoint in the group's list (jump consistent hashing): that is consistent only when the
 * last endpoint of the list leaves, and removing any other shifts the indexes after it, moving
 * keys of instances that did not change. A selection is a loop over the endpoints: a handful of
 * service instances cost nothing next to the round trip.
 */
final class RendezvousStrategy implements EndpointSelectionStrategy {
  /** The key a request is routed by; a request without one goes to the first healthy endpoint. */
  static final AttributeKey<String> ROUTE_KEY = AttributeKey.valueOf(RendezvousStrategy.class, "routeKey");

  static final RendezvousStrategy INSTANCE = new RendezvousStrategy();

  private RendezvousStrategy() {}

  @Override
  public EndpointSelector newSelector(EndpointGroup group) {
    return new Selector(group);
  }

  /** The endpoint of {@code endpoints} that wins {@code key}; null if there is none. */
  static Endpoint pick(List<Endpoint> endpoints, String key) {
    Endpoint best = null;
    long bestScore = 0;
    long k = hash(key);
    for (Endpoint e : endpoints) {
      long score = mix(k ^ hash(e.authority()));
      // Ties (astronomically rare) go to the smaller authority, so that every client agrees.
      if (best == null || Long.compareUnsigned(score, bestScore) > 0
          || score == bestScore && e.authority().compareTo(best.authority()) < 0) {
        best = e;
        bestScore = score;
      }
    }
    return best;
  }

  /** 64-bit FNV-1a of the UTF-8 bytes, mixed: stable across JVMs and versions, unlike String.hashCode. */
  static long hash(String s) {
    long h = 0xcbf29ce484222325L;
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    return mix(h);
  }

  /** The finalizer of SplitMix64: every input bit affects every output bit. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  private static final class Selector extends AbstractEndpointSelector {
    Selector(EndpointGroup group) {
      super(group);
      initialize();
    }

    @Override
    protected Endpoint doSelectNow(ClientRequestContext ctx) {
      List<Endpoint> endpoints = group().endpoints();
      if (endpoints.isEmpty()) {
        return null;
      }
      String key = ctx.attr(ROUTE_KEY);
      return key == null ? endpoints.get(0) : pick(endpoints, key);
    }
  }
}
