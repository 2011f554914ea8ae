package dev.sluice.server.envoy;

/**
 * How the Envoy service answers, as envoyproxy/ratelimit's settings of the same meaning set it.
 *
 * @param responseHeaders {@code LIMIT_RESPONSE_HEADERS_ENABLED}: add {@code RateLimit-Limit},
 *     {@code RateLimit-Remaining} and {@code RateLimit-Reset} of the descriptor closest to its
 *     limit to the answer, for Envoy to add to the response; off, the answer has no headers
 * @param dynamicMetadata {@code RESPONSE_DYNAMIC_METADATA}: describe the request and the
 *     {@code metadata} of the limits that passed in the answer's {@code dynamic_metadata}
 * @param shadowMode {@code SHADOW_MODE}: the overall code is always {@code OK}; the statuses still
 *     say which descriptors are over their limit
 * @param mergeDomains {@code MERGE_DOMAIN_CONFIG}: files of the same domain are merged rather
 *     than refused
 */
public record EnvoyOptions(boolean responseHeaders, boolean dynamicMetadata, boolean shadowMode,
    boolean mergeDomains) {

  /** Envoy's service's defaults: all off. */
  public static final EnvoyOptions DEFAULT = new EnvoyOptions(false, false, false, false);

  public EnvoyOptions withResponseHeaders(boolean on) {
    return new EnvoyOptions(on, dynamicMetadata, shadowMode, mergeDomains);
  }

  public EnvoyOptions withDynamicMetadata(boolean on) {
    return new EnvoyOptions(responseHeaders, on, shadowMode, mergeDomains);
  }

  public EnvoyOptions withShadowMode(boolean on) {
    return new EnvoyOptions(responseHeaders, dynamicMetadata, on, mergeDomains);
  }

  public EnvoyOptions withMergeDomains(boolean on) {
    return new EnvoyOptions(responseHeaders, dynamicMetadata, shadowMode, on);
  }
}
