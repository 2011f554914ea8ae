package dev.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The store starts the cross-shard path and hands it what it needs; the path never calls back
 * into the store, so each can be read and changed without the other. Checked on the compiled
 * classes: a use of a type, in a call, a field or a signature, names it in the class file.
 */
class CallDirectionTest {

  @Test
  void theCrossShardPathNamesNoStoreType() throws IOException {
    for (String c : new String[] {"ShardedDecision", "ShardedDecision$Group", "ShardedDecision$Arguments"}) {
      assertThat(classFile(c).contains("dev/sluice/redis/RedisStore")).as(c + " names RedisStore").isFalse();
    }
    assertThat(classFile("RedisStore").contains("dev/sluice/redis/ShardedDecision")).as("RedisStore starts it").isTrue();
  }

  private static String classFile(String name) throws IOException {
    try (InputStream in = CallDirectionTest.class.getResourceAsStream("/dev/sluice/redis/" + name + ".class")) {
      assertThat(in).as(name).isNotNull();
      // Class names are ASCII in the constant pool; the rest of the bytes do not matter here.
      return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    }
  }
}
