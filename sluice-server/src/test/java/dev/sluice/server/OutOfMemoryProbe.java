package dev.sluice.server;

import com.linecorp.armeria.common.CommonPools;
import dev.sluice.ItemDecision;
import dev.sluice.memory.MemoryStore;
import dev.sluice.server.cli.Main;
import dev.sluice.spi.Batch;
import dev.sluice.spi.Store;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * A Sluice process that runs out of memory when a test says so, for tests that start it in a JVM
 * of its own with a small heap. Never shipped: it lives with the tests.
 *
 * <p>{@code thread TRIGGER serve-args...} and {@code eventloop TRIGGER serve-args...} run
 * {@code sluice serve} as its main class does, then, once the file TRIGGER exists, fill the heap
 * and keep it full (as a key flood does) from a thread of their own or from one of the server's
 * event loops. {@code store CONFIG} runs the service on a store that runs out of memory deciding
 * the key {@code oom}.
 */
public final class OutOfMemoryProbe {
  /** Held, like a store's keys, so that the heap stays full. */
  static final List<long[]> HELD = new ArrayList<>();

  private OutOfMemoryProbe() {}

  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "thread", "eventloop" -> {
        String[] serve = Arrays.copyOfRange(args, 2, args.length);
        Thread main = new Thread(() -> Main.main(serve), "main-serve");
        main.start();
        Path trigger = Path.of(args[1]);
        while (!Files.exists(trigger)) {
          Thread.sleep(20);
        }
        Runnable fill = () -> {
          while (true) {
            HELD.add(new long[64 * 1024]);
          }
        };
        if (args[0].equals("thread")) {
          new Thread(fill, "filler").start();
        } else {
          CommonPools.workerGroup().next().execute(fill);
        }
      }
      case "store" -> {
        FatalErrors.install();
        SluiceService s = SluiceService.start(SluiceService.Settings.of(Path.of(args[1])).withPort(0),
            new ExhaustedStore());
        System.err.println("serving on port " + s.port());
      }
      default -> throw new IllegalArgumentException(args[0]);
    }
  }

  /** The memory store, out of memory for the key {@code oom}. */
  private static final class ExhaustedStore implements Store {
    private final MemoryStore memory = MemoryStore.create();

    @Override
    public CompletionStage<List<ItemDecision>> decide(Batch batch) {
      if (batch.items().stream().anyMatch(i -> i.key().equals("oom"))) {
        throw new OutOfMemoryError("Java heap space");
      }
      return memory.decide(batch);
    }

    @Override
    public CompletionStage<Void> reset(String rule, String key) {
      return memory.reset(rule, key);
    }

    @Override
    public CompletionStage<Boolean> ping() {
      return memory.ping();
    }

    @Override
    public String describe() {
      return "exhausted memory";
    }

    @Override
    public void close() {
      memory.close();
    }
  }
}
