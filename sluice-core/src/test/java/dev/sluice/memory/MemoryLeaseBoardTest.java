package dev.sluice.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.conformance.LeaseBoardContract;
import dev.sluice.spi.LeaseBoard;
import dev.sluice.testing.FakeTicker;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The memory store's lease board on a fake clock, and its bounds. */
class MemoryLeaseBoardTest extends LeaseBoardContract {
  private final FakeTicker ticker = new FakeTicker(1_000_000_000_000L);

  @Override
  protected LeaseBoard board() {
    return MemoryStore.builder().ticker(ticker).build().leaseBoard().orElseThrow();
  }

  @Override
  protected void pass(long millis) {
    ticker.advanceMillis(millis);
  }

  @Override
  protected long shortMillis() {
    return 1_000;
  }

  @Test
  void theStoreOffersOneBoard() {
    MemoryStore store = MemoryStore.builder().ticker(ticker).build();
    assertThat(store.leaseBoard()).containsSame(store.leaseBoard().orElseThrow());
  }

  @Test
  void pastItsInstancesANewReportIsRefusedUntilAnOldOneExpires() {
    MemoryLeaseBoard board = new MemoryLeaseBoard(ticker, 3, 1 << 20);
    join(board.report("a", bytes("1"), 100));
    join(board.report("b", bytes("1"), 200));
    join(board.report("c", bytes("1"), LONG));
    assertThatThrownBy(() -> join(board.report("d", bytes("1"), LONG)))
        .rootCause().isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("reports of 3 instances are kept, the most it holds")
        .hasMessageContaining("new instance d");
    // One already kept still reports.
    assertThat(join(board.report("c", bytes("2"), LONG)).instances()).isEqualTo(3);
    pass(150);
    // a expired first and made room; b still holds its place.
    assertThat(join(board.report("d", bytes("1"), LONG)).instances()).isEqualTo(3);
    assertThat(join(board.reports(1 << 20))).containsOnlyKeys("b", "c", "d");
    assertThatThrownBy(() -> join(board.report("e", bytes("1"), LONG)))
        .rootCause().isInstanceOf(IllegalStateException.class);
  }

  @Test
  void entriesAreBoundedInBytesAndTheCountFallsAsTheyExpire() {
    MemoryLeaseBoard board = new MemoryLeaseBoard(ticker, 100, 2 * 8_500);
    join(board.report("a", new byte[8_000], 100));
    join(board.report("b", new byte[8_000], LONG));
    long held = board.bytes();
    assertThat(held).isBetween(16_000L, 17_000L);
    assertThatThrownBy(() -> join(board.report("c", new byte[8_000], LONG)))
        .rootCause().isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("over its bound of 17000 bytes");
    assertThat(board.bytes()).isEqualTo(held);
    pass(100);
    // a expired and freed its bytes.
    join(board.report("c", new byte[8_000], LONG));
    assertThat(board.bytes()).isEqualTo(held);
    assertThat(join(board.reports(1 << 20))).containsOnlyKeys("b", "c");
    // Replacing a report by a smaller one frees the difference.
    join(board.report("b", new byte[10], LONG));
    assertThat(board.bytes()).isEqualTo(held - 7_990);
  }

  @Test
  void publishingPastTheBoundsWritesNothing() {
    MemoryLeaseBoard board = new MemoryLeaseBoard(ticker, 2, 1 << 20);
    LeaseBoard.Leader a = join(board.campaign("a", LONG));
    assertThatThrownBy(() -> join(board.publish("a", a.token(),
        Map.of("x", bytes("1"), "y", bytes("1"), "z", bytes("1")), LONG)))
        .rootCause().isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("sizes of 3 instances would be kept, more than the 2 it holds");
    assertThat(join(board.report("x", new byte[0], LONG)).sizes()).isEmpty();
    assertThat(board.bytes()).isLessThan(300);
  }
}
