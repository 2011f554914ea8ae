package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.server.cli.Cli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The repository's Dockerfile, which no build here runs (there is no container engine): what it
 * copies from the repository exists, it exposes the port {@code serve} listens on by default, and
 * its command is one {@code sluice} accepts.
 */
class DockerfileTest {
  static final Path ROOT = Path.of("..");

  @Test
  void theDockerfileCopiesWhatExistsExposesServesPortAndRunsTheLauncher() throws Exception {
    List<String> lines = Files.readAllLines(ROOT.resolve("Dockerfile"));
    assertThat(lines).contains("EXPOSE 8080", "ENTRYPOINT [\"bin/sluice\"]", "USER sluice");
    assertThat(Cli.run("serve", "--help").out()).contains("port for HTTP and gRPC (default: 8080)");
    for (String l : lines) {
      if (l.startsWith("COPY ") && !l.contains("--from=")) {
        String[] parts = l.split(" ");
        if (!parts[1].equals(".")) {
          assertThat(ROOT.resolve(parts[1])).as(l).isRegularFile();
        }
      } else if (l.startsWith("COPY --from=build")) {
        String source = l.split(" ")[l.contains("--chmod") ? 3 : 2].replaceFirst("^/src/", "");
        if (!source.contains("/target/")) {
          assertThat(ROOT.resolve(source)).as(l).isRegularFile();
        }
      }
    }
    String cmd = lines.stream().filter(l -> l.startsWith("CMD ")).findFirst().orElseThrow();
    assertThat(cmd).isEqualTo("CMD [\"serve\", \"--host\", \"0.0.0.0\", \"--port\", \"8080\", \"--config\", \"/etc/sluice\"]");
    // Its options parse: here the configuration is what is missing, not an option.
    Cli.Run r = Cli.run("serve", "--host", "0.0.0.0", "--port", "8080", "--config", ROOT.resolve("no-such-dir").toString());
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("no-such-dir").doesNotContainIgnoringCase("unknown option");
    assertThat(Files.readString(ROOT.resolve(".dockerignore"))).contains("**/target").contains(".git");
  }
}
