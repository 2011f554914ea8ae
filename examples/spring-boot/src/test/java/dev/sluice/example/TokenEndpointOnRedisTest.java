package dev.sluice.example;

import dev.sluice.testkit.Flavor;
import dev.sluice.testkit.Standalone;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The same on a real Redis, started for the test. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TokenEndpointOnRedisTest extends TokenEndpointTest {
  private static final Standalone REDIS = Standalone.start(Flavor.REDIS);

  @DynamicPropertySource
  static void store(DynamicPropertyRegistry registry) {
    registry.add("sluice.store", REDIS::uri);
  }

  @AfterAll
  static void stopRedis() {
    REDIS.close();
  }

  @LocalServerPort
  int port;

  @Override
  int port() {
    return port;
  }

  @Test
  void sixthCallIsDenied() throws Exception {
    theSixthCallOfFiveInThreeSecondsIsDenied();
  }
}
