package dev.sluice.spring;

import dev.sluice.spring.web.RouteTable;

/** {@code sluice.web.routes}, compiled, each route's operation and attributes checked against the rules. */
public record SluiceRoutes(RouteTable table) {}
