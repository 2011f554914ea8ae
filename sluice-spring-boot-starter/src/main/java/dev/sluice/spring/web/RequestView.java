package dev.sluice.spring.web;

import java.util.List;

/** What a route reads of a request, the same for a servlet request and a WebFlux exchange. */
interface RequestView {
  String method();

  /** The path within the application, as received (still percent-encoded). */
  String path();

  /** Every line of header {@code name}, in order; empty when absent. */
  List<String> headers(String name);

  /** The first value of query parameter {@code name}, or null. */
  String query(String name);

  /** The connection's peer address, or null. */
  String remoteAddress();

  /** The authenticated principal's name, or null. */
  String principal();
}
