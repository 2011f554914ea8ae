package dev.sluice.example;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TokenEndpointOnMemoryTest extends TokenEndpointTest {
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
