package dev.sluice.bench.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class WindowsTest {

  @Test
  void admissionsAnsweredWhenSentAreCountedExactly() {
    int[] bins = new int[20];
    bins[0] = 4;
    bins[9] = 6;
    bins[10] = 3;
    Windows.Range r = new Windows(bins, bins).sliding(10, 10, 0, 10);
    // [0, 10) holds 10, [1, 11) holds 9, …, [10, 20) holds 3.
    assertThat(r.max()).isEqualTo(1.0);
    assertThat(r.min()).isEqualTo(0.3);
    assertThat(r.maxUpper()).isEqualTo(r.max());
    assertThat(r.minLower()).isEqualTo(r.min());
    assertThat(r.maxLower()).isEqualTo(r.max());
    assertThat(r.meanWidth()).isZero();
    assertThat(r.windows()).isEqualTo(11);
  }

  @Test
  void anAnswerLaterThanItsRequestWidensTheBoundsOfTheWindowsItMayFallIn() {
    int[] sent = new int[30];
    int[] answered = new int[30];
    sent[8] = 1; // stamped by the store somewhere in [8, 13)
    answered[12] = 1;
    Windows w = new Windows(sent, answered);
    // Window [10, 20): the answer falls in it, the request not: 0 or 1.
    Windows.Range at10 = w.sliding(10, 1, 10, 10);
    assertThat(at10.max()).isEqualTo(1.0);
    assertThat(at10.minLower()).isZero();
    assertThat(at10.maxLower()).isZero(); // counted by answer time, but not certainly in it
    assertThat(at10.maxUpper()).isEqualTo(1.0);
    // Window [0, 10): the request falls in it, the answer not.
    Windows.Range at0 = w.sliding(10, 1, 0, 0);
    assertThat(at0.max()).isZero();
    assertThat(at0.maxUpper()).isEqualTo(1.0);
  }

  @Test
  void aTokenBucketSpanIsMeasuredAgainstTheBurstPlusTheRefill() {
    int[] bins = new int[10];
    bins[0] = 20; // 10 per 10 ms: at most 10 + d in any span of d ms
    double[] max = new Windows(bins, bins).tokenBucketMax(10, 10, 10);
    assertThat(max[0]).isCloseTo(20 / 11.0, within(1e-9));
    assertThat(max[1]).isCloseTo(max[0], within(1e-9));
    assertThat(max[2]).isCloseTo(max[0], within(1e-9));
  }

  @Test
  void aWindowCertainlyHoldsOnlyWhatWasBothSentAndAnsweredInIt() {
    int[] sent = new int[40];
    int[] answered = new int[40];
    // Four sent in ms 5 and answered 8 ms later, in ms 13; two sent and answered in ms 15.
    sent[5] = 4;
    answered[13] = 4;
    sent[15] = 2;
    answered[15] = 2;
    Windows.Range r = new Windows(sent, answered).sliding(10, 1, 10, 10);
    // Window [10, 20): six by answer time, but the store may have stamped the four before 10.
    assertThat(r.max()).isEqualTo(6.0);
    assertThat(r.maxLower()).isEqualTo(2.0);
    assertThat(r.maxUpper()).isEqualTo(6.0);
  }

  @Test
  void aRangeWithoutAFullWindowIsRefused() {
    assertThatThrownBy(() -> new Windows(new int[5], new int[5]).sliding(10, 1, 0, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no full window of 10 ms");
  }
}
