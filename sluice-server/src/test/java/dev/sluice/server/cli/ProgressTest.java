package dev.sluice.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ProgressTest {
  final AtomicLong nanos = new AtomicLong(1_000);
  final StringWriter err = new StringWriter();

  Progress progress(Progress.Mode mode, boolean asked) {
    return new Progress(new PrintWriter(err), mode, asked, nanos::get);
  }

  void advanceMillis(long ms) {
    nanos.addAndGet(ms * 1_000_000);
  }

  @Test
  void aTerminalGetsOneLineRedrawnAtMostTenTimesASecond() {
    Progress p = progress(Progress.Mode.REDRAW, false);
    AtomicInteger built = new AtomicInteger();
    for (int i = 1; i <= 25; i++) {
      advanceMillis(20);
      int n = i;
      p.update(() -> {
        built.incrementAndGet();
        return "step " + n;
      });
    }
    // 500 ms in steps of 20 ms: a redraw every 100 ms, the status built only then.
    assertThat(built).hasValue(5);
    assertThat(err.toString()).isEqualTo("\rstep 5 [0:00]\u001b[K\rstep 10 [0:00]\u001b[K\rstep 15 [0:00]\u001b[K"
        + "\rstep 20 [0:00]\u001b[K\rstep 25 [0:00]\u001b[K");
    advanceMillis(61_000);
    p.finish("done");
    assertThat(err.toString()).endsWith("\rdone [1:01]\u001b[K\n");
  }

  @Test
  void aLogGetsALineEveryFiveSecondsAndAFinalOneOnlyIfItGotAny() {
    Progress p = progress(Progress.Mode.LINES, false);
    for (int s = 1; s <= 12; s++) {
      advanceMillis(1000);
      int n = s;
      p.update(() -> "at " + n);
    }
    p.finish("done");
    assertThat(err.toString()).isEqualTo("at 5 [0:05]\nat 10 [0:10]\ndone [0:12]\n");

    StringWriter shortRun = new StringWriter();
    Progress q = new Progress(new PrintWriter(shortRun), Progress.Mode.LINES, false, nanos::get);
    advanceMillis(4_999);
    q.update(() -> "never");
    q.finish("done");
    assertThat(shortRun.toString()).isEmpty();
  }

  @Test
  void askingForProgressGivesALogItsFinalLineEvenOnAShortRun() {
    Progress p = progress(Progress.Mode.LINES, true);
    advanceMillis(300);
    p.update(() -> "never");
    p.finish("done");
    assertThat(err.toString()).isEqualTo("done [0:00]\n");
  }

  @Test
  void offShowsNothing() {
    Progress p = progress(Progress.Mode.OFF, false);
    advanceMillis(60_000);
    p.update(() -> {
      throw new AssertionError("not built when off");
    });
    p.finish("done");
    assertThat(err.toString()).isEmpty();
  }

  @Test
  void theModeFollowsTheOptionThenTheTerminal() {
    assertThat(Progress.mode(null, true)).isEqualTo(Progress.Mode.REDRAW);
    assertThat(Progress.mode(null, false)).isEqualTo(Progress.Mode.LINES);
    assertThat(Progress.mode(true, true)).isEqualTo(Progress.Mode.REDRAW);
    assertThat(Progress.mode(true, false)).isEqualTo(Progress.Mode.LINES);
    assertThat(Progress.mode(false, true)).isEqualTo(Progress.Mode.OFF);
    assertThat(Progress.mode(false, false)).isEqualTo(Progress.Mode.OFF);
  }

  @Test
  void elapsedTimeReadsAsMinutesOrHours() {
    assertThat(Progress.clock(0)).isEqualTo("0:00");
    assertThat(Progress.clock(59_999_999_999L)).isEqualTo("0:59");
    assertThat(Progress.clock(3_599_000_000_000L)).isEqualTo("59:59");
    assertThat(Progress.clock(3_723_000_000_000L)).isEqualTo("1:02:03");
  }
}
