package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.FakeTicker;
import dev.sluice.testing.FlakyStore;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** SPEC §8 through the service: {@code failure_mode: local} holds the configured share of a limit. */
class LocalShareServiceTest {
  @TempDir
  Path dir;

  @Test
  void whileTheStoreIsDownALocalRuleHoldsItsShareOfTheLimitAndSaysItIsDegraded() throws Exception {
    Files.writeString(dir.resolve("limits.yaml"), """
        limits:
          - name: api
            failure_mode: local
            config:
              - limit: 10
                period: 60
        """);
    FlakyStore store = new FlakyStore(MemoryStore.builder().ticker(new FakeTicker()).build()).mode(FlakyStore.Mode.FAILS);
    try (SluiceService service = SluiceService.start(SluiceService.Settings.of(dir).withHost("127.0.0.1").withPort(0)
        .withDrainTimeout(Duration.ofMillis(200)).withLocalShare(0.5), store)) {
      ServiceClient client = new ServiceClient(service.port());
      List<Integer> codes = new ArrayList<>();
      JsonNode last = null;
      for (int i = 0; i < 7; i++) {
        HttpResponse<String> r = client.post("/v1/acquire", "{\"rule\":\"api\",\"key\":\"k\"}");
        codes.add(r.statusCode());
        last = ServiceClient.json(r);
        assertThat(last.get("degraded").asBoolean()).isTrue();
      }
      assertThat(codes).containsExactly(200, 200, 200, 200, 200, 429, 429);
      assertThat(last.get("items").get(0).get("windows").get(0).get("limit").asLong()).isEqualTo(5);
    }
  }

  @Test
  void aShareOutsideZeroToOneIsRefused() {
    assertThatThrownBy(() -> SluiceService.Settings.of(dir).withLocalShare(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("localShare");
    assertThatThrownBy(() -> SluiceService.Settings.of(dir).withLocalShare(1.5))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("localShare");
  }
}
