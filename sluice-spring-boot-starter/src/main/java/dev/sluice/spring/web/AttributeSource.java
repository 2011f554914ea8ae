package dev.sluice.spring.web;

import dev.sluice.spring.SluiceConfigurationException;
import java.util.List;
import java.util.Map;

/**
 * Where a route takes an attribute's value: {@code principal}, {@code client-ip},
 * {@code header:NAME}, {@code path}, {@code method}, {@code path-variable:NAME},
 * {@code query:NAME} or {@code value:TEXT}. A request without the value (no principal, no such
 * header) lacks the attribute, which the operation's {@code when} / {@code unless} may expect.
 */
record AttributeSource(Kind kind, String argument) {
  enum Kind {
    PRINCIPAL("principal"), CLIENT_IP("client-ip"), HEADER("header:"), PATH("path"), METHOD("method"),
    PATH_VARIABLE("path-variable:"), QUERY("query:"), VALUE("value:");

    final String text;

    Kind(String text) {
      this.text = text;
    }
  }

  static final String FORMS = "principal, client-ip, header:NAME, path, method, path-variable:NAME, query:NAME, "
      + "value:TEXT";

  /**
   * Parses {@code text}; {@code where} names the property in the error.
   *
   * @throws SluiceConfigurationException if {@code text} is none of the forms
   */
  static AttributeSource parse(String text, String where) {
    String t = text == null ? "" : text.trim();
    for (Kind k : Kind.values()) {
      if (k.text.endsWith(":")) {
        if (t.startsWith(k.text) && t.length() > k.text.length()) {
          return new AttributeSource(k, t.substring(k.text.length()));
        }
      } else if (t.equals(k.text)) {
        return new AttributeSource(k, null);
      }
    }
    throw new SluiceConfigurationException(where + " is '" + text + "', which is not a source of attributes",
        "Use one of: " + FORMS + ".");
  }

  /** The value in {@code request}, or null when it has none. */
  String value(RequestView request, ClientIp clientIp, Map<String, String> pathVariables) {
    return switch (kind) {
      case PRINCIPAL -> request.principal();
      case CLIENT_IP -> clientIp.resolve(request.remoteAddress(), request.headers("Forwarded"),
          request.headers("X-Forwarded-For"));
      case HEADER -> {
        List<String> v = request.headers(argument);
        yield v.isEmpty() ? null : v.get(0);
      }
      case PATH -> request.path();
      case METHOD -> request.method();
      case PATH_VARIABLE -> pathVariables.get(argument);
      case QUERY -> request.query(argument);
      case VALUE -> argument;
    };
  }
}
