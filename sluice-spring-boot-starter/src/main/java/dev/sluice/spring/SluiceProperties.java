package dev.sluice.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code sluice.*} properties of an application. */
@ConfigurationProperties("sluice")
public class SluiceProperties {
  /** Whether Sluice is configured at all. */
  private boolean enabled = true;

  /**
   * The store: a Redis or Valkey URI ({@code redis://}, {@code rediss://},
   * {@code redis-sentinel://}, {@code redis-cluster://}), or {@code memory}. Absent: memory.
   */
  private String store;

  /** Rules, operations and tiers written inline, in Sluice's native YAML ({@code limits:}, ...). */
  private String rules;

  /**
   * A configuration file, or a directory of them, native ({@code limits:}) or Envoy's format
   * ({@code domain:}), watched and reloaded when it changes.
   */
  private String config;

  /** How often {@code sluice.config} is looked at for changes. */
  private Duration reloadInterval = Duration.ofSeconds(1);

  /** How long a decision may wait for the store before the rule's failure mode decides. */
  private Duration storeTimeout;

  /** The prefix of the Redis store's key names; absent: {@code sluice:}. */
  private String redisPrefix;

  private final Web web = new Web();

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public String getStore() {
    return store;
  }

  public void setStore(String store) {
    this.store = store;
  }

  public String getRules() {
    return rules;
  }

  public void setRules(String rules) {
    this.rules = rules;
  }

  public String getConfig() {
    return config;
  }

  public void setConfig(String config) {
    this.config = config;
  }

  public Duration getReloadInterval() {
    return reloadInterval;
  }

  public void setReloadInterval(Duration reloadInterval) {
    this.reloadInterval = reloadInterval;
  }

  public Duration getStoreTimeout() {
    return storeTimeout;
  }

  public void setStoreTimeout(Duration storeTimeout) {
    this.storeTimeout = storeTimeout;
  }

  public String getRedisPrefix() {
    return redisPrefix;
  }

  public void setRedisPrefix(String redisPrefix) {
    this.redisPrefix = redisPrefix;
  }

  public Web getWeb() {
    return web;
  }

  /** The servlet and WebFlux filters. */
  public static class Web {
    /** Whether the filter runs {@code sluice.web.routes} (off: the routes are not read or checked). */
    private boolean enabled = true;

    /** Requests mapped to operations; the first route that matches a request decides it. */
    private List<Route> routes = new ArrayList<>();

    /**
     * Addresses or CIDR ranges of the proxies in front of the application: {@code Forwarded} and
     * {@code X-Forwarded-For} are read only from them.
     */
    private List<String> trustedProxies = new ArrayList<>();

    /** Whether a denial has an RFC 9457 problem body ({@code application/problem+json}). */
    private boolean problemDetails = true;

    /**
     * Whether start-up fails when a route's pattern matches no annotated handler (turn off for
     * routes served by functional endpoints, static resources or other servlets).
     */
    private boolean checkRoutes = true;

    /**
     * The filter's order: after Spring Security's (-100), so that the principal is known. An order
     * before Security's stops the start if a route reads the principal.
     */
    private int filterOrder = 0;

    /**
     * When answers carry the {@code RateLimit-Policy} and {@code RateLimit} fields: {@code always}
     * (the IETF draft's way: clients can slow down before they are denied), {@code on-denial}, or
     * {@code never}. {@code Retry-After} is on every denial whatever this says.
     */
    private Headers headers = Headers.ALWAYS;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public List<Route> getRoutes() {
      return routes;
    }

    public void setRoutes(List<Route> routes) {
      this.routes = routes;
    }

    public List<String> getTrustedProxies() {
      return trustedProxies;
    }

    public void setTrustedProxies(List<String> trustedProxies) {
      this.trustedProxies = trustedProxies;
    }

    public boolean isProblemDetails() {
      return problemDetails;
    }

    public void setProblemDetails(boolean problemDetails) {
      this.problemDetails = problemDetails;
    }

    public boolean isCheckRoutes() {
      return checkRoutes;
    }

    public void setCheckRoutes(boolean checkRoutes) {
      this.checkRoutes = checkRoutes;
    }

    public int getFilterOrder() {
      return filterOrder;
    }

    public void setFilterOrder(int filterOrder) {
      this.filterOrder = filterOrder;
    }

    public Headers getHeaders() {
      return headers;
    }

    public void setHeaders(Headers headers) {
      this.headers = headers;
    }
  }

  /** When answers carry the RateLimit fields. */
  public enum Headers {
    /** On every decided request. */
    ALWAYS,
    /** On denials only. */
    ON_DENIAL,
    /** Never; denials still carry {@code Retry-After}. */
    NEVER
  }

  /**
   * One route: which requests, and what decides them: an operation and where each attribute comes
   * from, or an Envoy domain and the descriptors built from each request.
   */
  public static class Route {
    /** A path pattern, as Spring MVC and WebFlux write them: {@code /api/orders/**}, {@code /users/{id}}. */
    private String path;

    /** HTTP methods the route applies to; empty: every method. */
    private List<String> methods = new ArrayList<>();

    /** The operation each matching request runs (or give {@code domain} and {@code descriptors}). */
    private String operation;

    /** The Envoy domain (of a file in {@code sluice.config}) whose descriptors decide each matching request. */
    private String domain;

    /**
     * The Envoy descriptors each matching request sends to {@code domain}, in order; each maps its
     * entries' keys, in order, to where their values come from (the sources of {@code attributes}).
     */
    private List<Map<String, String>> descriptors = new ArrayList<>();

    /**
     * Each attribute of the operation and where its value comes from: {@code principal},
     * {@code client-ip}, {@code header:NAME}, {@code path}, {@code method},
     * {@code path-variable:NAME}, {@code query:NAME}, or {@code value:TEXT}.
     */
    private Map<String, String> attributes = new LinkedHashMap<>();

    /** Units each request costs. */
    private long cost = 1;

    public String getPath() {
      return path;
    }

    public void setPath(String path) {
      this.path = path;
    }

    public List<String> getMethods() {
      return methods;
    }

    public void setMethods(List<String> methods) {
      this.methods = methods;
    }

    public String getOperation() {
      return operation;
    }

    public void setOperation(String operation) {
      this.operation = operation;
    }

    public String getDomain() {
      return domain;
    }

    public void setDomain(String domain) {
      this.domain = domain;
    }

    public List<Map<String, String>> getDescriptors() {
      return descriptors;
    }

    public void setDescriptors(List<Map<String, String>> descriptors) {
      this.descriptors = descriptors;
    }

    public Map<String, String> getAttributes() {
      return attributes;
    }

    public void setAttributes(Map<String, String> attributes) {
      this.attributes = attributes;
    }

    public long getCost() {
      return cost;
    }

    public void setCost(long cost) {
      this.cost = cost;
    }
  }
}
