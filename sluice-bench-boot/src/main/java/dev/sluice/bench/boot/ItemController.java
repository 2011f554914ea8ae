package dev.sluice.bench.boot;

import java.util.Map;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** A small JSON answer, as an API's read of one item would give. */
@RestController
class ItemController {
  @GetMapping("/api/items/{id}")
  Map<String, String> item(@PathVariable String id) {
    return Map.of("id", id, "name", "item " + id);
  }
}
