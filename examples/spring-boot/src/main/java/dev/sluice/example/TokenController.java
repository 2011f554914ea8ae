package dev.sluice.example;

import java.util.Map;
import java.util.UUID;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
class TokenController {
  @PostMapping("/auth/token")
  Map<String, String> createToken() {
    return Map.of("token", UUID.randomUUID().toString());
  }
}
