package dev.sluice.server.cli;

import picocli.CommandLine.Option;

/** How the policy commands reach a running service: its URL, the admin token, the output form. */
final class AdminOptions {
  @Option(names = "--url", defaultValue = "http://127.0.0.1:8080", paramLabel = "URL",
      description = "the service's HTTP address (default: ${DEFAULT-VALUE})")
  String url;

  @Option(names = "--admin-token", defaultValue = "${env:SLUICE_ADMIN_TOKEN}", paramLabel = "TOKEN",
      description = "sent as 'Authorization: Bearer TOKEN' when the service needs one (default: $SLUICE_ADMIN_TOKEN; "
          + "the variable keeps it out of the process list)")
  String adminToken;

  @Option(names = "--json", description = "print the service's JSON answer instead of a table")
  boolean json;
}
