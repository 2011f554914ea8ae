package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The handler {@link FatalErrors#install()} sets, for errors that are not fatal. */
class FatalErrorsTest {

  @Test
  void aNonFatalUncaughtErrorIsPrintedOnceNotLoopedIntoAStackOverflow() throws Exception {
    Thread.UncaughtExceptionHandler before = Thread.getDefaultUncaughtExceptionHandler();
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    try {
      // No handler before it: the case where it deferred to the thread group, which called it again.
      Thread.setDefaultUncaughtExceptionHandler(null);
      FatalErrors.install();
      System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
      Thread t = new Thread(() -> {
        throw new NoClassDefFoundError("com/example/Missing");
      }, "fatal-errors-test");
      t.start();
      t.join();
    } finally {
      System.setErr(err);
      Thread.setDefaultUncaughtExceptionHandler(before);
    }
    String printed = captured.toString(StandardCharsets.UTF_8);
    assertThat(printed).contains("Exception in thread \"fatal-errors-test\"")
        .contains("NoClassDefFoundError: com/example/Missing")
        .doesNotContain("StackOverflowError");
  }
}
