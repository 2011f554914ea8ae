/**
 * The {@code sluice} command and the service it runs. An application, not a library: it exports
 * nothing. The runnable {@code sluice.jar} is a shaded jar run from the class path
 * ({@code java -jar}), where this descriptor is left out; it serves to compile the service
 * against the other modules' API and the internals they export to it by name.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module dev.sluice.server {
  requires dev.sluice.core;
  requires dev.sluice.redis;
  requires com.fasterxml.jackson.core;
  requires com.fasterxml.jackson.databind;
  requires com.linecorp.armeria;
  requires com.linecorp.armeria.grpc;
  requires com.google.protobuf;
  requires io.grpc;
  requires io.grpc.stub;
  requires io.grpc.services;
  requires io.netty.buffer;
  requires io.netty.codec.compression;
  requires io.netty.codec.http;
  requires io.netty.codec.http2;
  requires io.netty.common;
  requires io.netty.transport;
  requires lettuce.core;
  requires micrometer.core;
  requires micrometer.registry.prometheus;
  requires info.picocli;
  requires java.net.http;
  requires org.slf4j;
  // Envoy's API classes (io.envoyproxy.controlplane:api) name no module: this is the name Java
  // derives from the jar's file name.
  requires api;

  // picocli sets the commands' @Option and @Parameters fields by reflection.
  opens dev.sluice.server.cli to info.picocli;
}
