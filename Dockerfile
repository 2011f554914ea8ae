# The sluice service: sluice.jar and bin/sluice on a Java 17 runtime, run as a user of its own.
#
#   docker build -t sluice .
#   docker run -p 8080:8080 -v "$PWD/conf:/etc/sluice:ro" -e SLUICE_ADMIN_TOKEN=... sluice
#   docker run sluice --version
#
# The rules are read from /etc/sluice (the repository's examples until one is mounted there);
# arguments after the image name replace the whole default command ("serve ...").

FROM eclipse-temurin:17-jdk AS build
WORKDIR /src
COPY . .
# The runnable jar only: the tests need Redis servers, which CI runs them against.
RUN ./mvnw -B -ntp -pl sluice-server -am package -DskipTests -Dmaven.javadoc.skip=true -Dmaven.source.skip=true

FROM eclipse-temurin:17-jre
RUN groupadd --system sluice \
 && useradd --system --gid sluice --home-dir /opt/sluice --no-create-home --shell /usr/sbin/nologin sluice
WORKDIR /opt/sluice
COPY --from=build /src/sluice-server/target/sluice.jar lib/sluice.jar
COPY --from=build --chmod=0755 /src/sluice-server/src/main/dist/bin/sluice bin/sluice
COPY examples/limits.yaml /etc/sluice/limits.yaml
USER sluice
# HTTP JSON API, Envoy's gRPC rate limit and quota services, /metrics and the probes: one port.
EXPOSE 8080
ENTRYPOINT ["bin/sluice"]
# 0.0.0.0: inside a container, loopback is unreachable from the outside. Beyond loopback the
# admin endpoints answer only with SLUICE_ADMIN_TOKEN set (and the request bearing it).
CMD ["serve", "--host", "0.0.0.0", "--port", "8080", "--config", "/etc/sluice"]
