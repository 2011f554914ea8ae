package dev.sluice.server.http;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/** Debian's headless Chromium through its chromedriver, in a profile of its own, for the dashboard's tests. */
public final class HeadlessChromium implements AutoCloseable {
  static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  static final Path DRIVER = Path.of("/usr/bin/chromedriver");

  public final ChromeDriver driver;
  private final Path profile;

  public HeadlessChromium(int width, int height) throws IOException {
    for (Path p : new Path[] {CHROMIUM, DRIVER}) {
      if (!Files.isExecutable(p)) {
        throw new AssertionError(p + " is missing: the dashboard's browser tests need it "
            + "(apt-get install -y chromium chromium-driver)");
      }
    }
    profile = Files.createTempDirectory("sluice-chromium");
    ChromeOptions o = new ChromeOptions();
    o.setBinary(CHROMIUM.toFile());
    o.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", "--user-data-dir=" + profile, "--window-size=" + width + "," + height);
    ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile())
        .usingAnyFreePort().build();
    driver = new ChromeDriver(service, o);
    driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
  }

  @Override
  public void close() throws IOException {
    try {
      driver.quit();
    } finally {
      try (Stream<Path> s = Files.walk(profile)) {
        s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
