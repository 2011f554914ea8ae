package dev.sluice.testkit;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

/** Which server the test kit runs: Redis or Valkey. Both speak the same protocol. */
public enum Flavor {
  REDIS("redis-server", "apt-get install -y redis-server redis-sentinel"),
  VALKEY("valkey-server", "apt-get install -y -t bookworm-backports valkey-server");

  private final String binary;
  private final String install;

  Flavor(String binary, String install) {
    this.binary = binary;
    this.install = install;
  }

  /** The server executable; sentinels run as the same executable with {@code --sentinel}. */
  public String binaryName() {
    return binary;
  }

  /** The command that installs the server on Debian. */
  public String installCommand() {
    return install;
  }

  /**
   * The absolute path of the server executable on {@code PATH}.
   *
   * @throws AssertionError naming the install command when it is missing: a test that needs a
   *     server must fail, never skip silently
   */
  public Path binary() {
    return binaryOn(System.getenv().getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin"));
  }

  Path binaryOn(String path) {
    for (String dir : path.split(File.pathSeparator)) {
      if (dir.isEmpty()) {
        continue;
      }
      Path p = Path.of(dir, binary);
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    throw new AssertionError(binary + " is not installed (not found on PATH " + path + "). Install it with: "
        + install);
  }
}
