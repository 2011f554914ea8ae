package dev.sluice.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.internal.policy.DenialSketch.Entry;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DenialSketchTest {

  @Test
  void aNewcomerToAFullSketchTakesTheSmallestEntrysPlaceWithItsCountAsError() {
    DenialSketch s = new DenialSketch(2);
    s.add("a", 3);
    s.add("b", 1);
    s.add("c", 2);
    assertThat(s.top(5)).containsExactly(new Entry("a", 3, 0), new Entry("c", 3, 1));
    assertThat(s.total()).isEqualTo(6);
    assertThat(s.floor()).isEqualTo(3);
  }

  @Test
  void aSketchThatIsNotFullCountsExactly() {
    DenialSketch s = new DenialSketch(4);
    s.add("a", 2);
    s.add("b", 5);
    s.add("a", 1);
    assertThat(s.top(4)).containsExactly(new Entry("b", 5, 0), new Entry("a", 3, 0));
    assertThat(s.floor()).isZero();
    assertThat(s.capacity()).isEqualTo(4);
    assertThat(new DenialSketch().capacity()).isEqualTo(DenialSketch.DEFAULT_CAPACITY).isEqualTo(128);
  }

  /** The worked example of docs/policies.md: k = 128, 1,000,000 denials, the heavy keys last. */
  @Test
  void aMillionDenialsInASketchOf128AreCountedWithin7812OfTheTruth() {
    DenialSketch s = new DenialSketch(128);
    // 500,000 keys denied once, then 10 keys denied 50,000 times each, in turns: each heavy key
    // arrives into a sketch full of noise and is charged its floor.
    for (int i = 0; i < 500_000; i++) {
      s.add("noise:" + i, 1);
    }
    for (int round = 0; round < 50_000; round++) {
      for (int h = 0; h < 10; h++) {
        s.add("heavy:" + h, 1);
      }
    }
    assertThat(s.total()).isEqualTo(1_000_000);
    assertThat(s.floor()).isLessThanOrEqualTo(7_812);
    List<Entry> top = s.top(10);
    assertThat(top).extracting(Entry::key).allMatch(k -> k.startsWith("heavy:")).hasSize(10);
    for (Entry e : top) {
      assertThat(e.count()).isBetween(50_000L, 50_000L + 7_812);
      assertThat(e.error()).isLessThanOrEqualTo(7_812);
      assertThat(e.guaranteed()).isLessThanOrEqualTo(50_000);
    }
    assertThat(s.top(128)).allSatisfy(e -> assertThat(e.error()).isLessThanOrEqualTo(7_812));
  }

  @Test
  void aMergeChargesAKeyAbsentFromAFullSketchThatSketchsFloor() {
    DenialSketch a = new DenialSketch(2);
    a.add("a", 5);
    a.add("b", 3); // full, floor 3
    DenialSketch b = new DenialSketch(2);
    b.add("c", 4); // not full, floor 0
    a.merge(b);
    // c: up to 3 unseen by a, plus 4; b: 3 plus nothing unseen by b (not full); a: 5.
    assertThat(a.top(2)).containsExactly(new Entry("c", 7, 3), new Entry("a", 5, 0));
    assertThat(a.total()).isEqualTo(12);
    assertThat(a.floor()).isEqualTo(5);
  }

  @Test
  void aSketchMergedIntoItselfCountsEverythingTwice() {
    DenialSketch a = new DenialSketch(3);
    a.add("a", 2);
    a.add("b", 1);
    a.merge(a);
    assertThat(a.top(3)).containsExactly(new Entry("a", 4, 0), new Entry("b", 2, 0));
    assertThat(a.total()).isEqualTo(6);
  }

  @Test
  void sketchesOfDifferentCapacitiesDoNotMerge() {
    assertThatThrownBy(() -> new DenialSketch(128).merge(new DenialSketch(64)))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("cannot merge a sketch of capacity 64 into one of capacity 128");
  }

  @Test
  void misuseIsRefusedWithAMessage() {
    DenialSketch s = new DenialSketch(2);
    assertThatThrownBy(() -> s.add("a", 0)).hasMessage("a count added to a sketch must be positive, was 0");
    assertThatThrownBy(() -> s.add("", 1)).hasMessage("a sketch's key must not be empty");
    assertThatThrownBy(() -> s.top(-1)).hasMessage("the number of entries asked for must not be negative, was -1");
    assertThatThrownBy(() -> new DenialSketch(0))
        .hasMessage("a sketch's capacity must be between 1 and 10000, was 0");
    assertThatThrownBy(() -> new DenialSketch(10_001))
        .hasMessage("a sketch's capacity must be between 1 and 10000, was 10001");
    assertThat(s.isEmpty()).isTrue();
  }

  @Test
  void theTotalStopsWhereALuaNumberStillHoldsItExactly() {
    DenialSketch s = new DenialSketch(2);
    s.add("a", DenialSketch.MAX_TOTAL);
    assertThatThrownBy(() -> s.add("b", 1))
        .isExactlyInstanceOf(IllegalStateException.class)
        .hasMessage("a sketch's total cannot pass 9007199254740991");
    assertThatThrownBy(() -> s.merge(s)).hasMessage("a sketch's total cannot pass 9007199254740991");
    assertThat(s.total()).isEqualTo(DenialSketch.MAX_TOTAL);
  }

  @Test
  void topGivesAtMostWhatIsHeldInOrderOfCountThenKey() {
    DenialSketch s = new DenialSketch(8);
    s.add("b", 2);
    s.add("a", 2);
    s.add("c", 9);
    assertThat(s.top(0)).isEmpty();
    assertThat(s.top(2)).containsExactly(new Entry("c", 9, 0), new Entry("a", 2, 0));
    assertThat(s.top(100)).hasSize(3);
  }

  @Test
  void theWireFormIsLinesOfCountErrorLengthAndKeyAfterAHeader() {
    DenialSketch s = new DenialSketch(3);
    s.add("a b", 2);
    s.add("x\ny", 5);
    s.add("é", 2);
    assertThat(s.encode()).isEqualTo("sketch/1 3 9 3\n5 0 3 x\ny\n2 0 3 a b\n2 0 2 é\n");
    assertThat(new DenialSketch(5).encode()).isEqualTo("sketch/1 5 0 0\n");
    assertThat(DenialSketch.decode("sketch/1 5 0 0\n").capacity()).isEqualTo(5);
  }

  @Test
  void aKeyWithoutAUtf8FormIsNotEncoded() {
    DenialSketch s = new DenialSketch(3);
    s.add("\uD800", 1);
    assertThatThrownBy(s::encode)
        .isExactlyInstanceOf(IllegalStateException.class)
        .hasMessage("a sketch's key is not valid Unicode (a lone surrogate)");
  }

  @ParameterizedTest(name = "{1}")
  @CsvSource(delimiter = '|', textBlock = """
      ''                                  | it does not start with 'sketch/1 '
      'sketch/2 2 0 0\\n'                 | it does not start with 'sketch/1 '
      'sketch/1 '                         | it ends before the capacity
      'sketch/1 x 0 0\\n'                 | the capacity is not a number
      'sketch/1 0 0 0\\n'                 | the capacity must be between 1 and 10000, was 0
      'sketch/1 10001 0 0\\n'             | the capacity is more than 10000
      'sketch/1 2 05 1\\n5 0 1 a\\n'      | the total has a leading zero
      'sketch/1 2 -5 1\\n'                | the total is not a number
      'sketch/1 2 5 1'                    | it ends after the number of entries
      'sketch/1 2 5 1 \\n'                | the number of entries is not followed by a line end
      'sketch/1 2 5 3\\n5 0 1 a\\n'       | the number of entries is more than 2
      'sketch/1 2 9007199254740992 0\\n'  | the total is more than 9007199254740991
      'sketch/1 2 5 1\\n'                 | it ends before entry 1 of 1: the count
      'sketch/1 2 5 1\\n5 0 1 a'          | entry 1 of 1: no line end after the key
      'sketch/1 2 5 1\\n5 0 3 a\\n'       | entry 1 of 1: it ends inside the key
      'sketch/1 2 5 1\\n5 0 0 \\n'        | entry 1 of 1: the key is empty
      'sketch/1 2 5 1\\n0 0 1 a\\n'       | entry 1 of 1: the count must be at least 1
      'sketch/1 2 5 1\\n5 6 1 a\\n'       | entry 1 of 1: the error 6 exceeds the count 5
      'sketch/1 2 1 1\\n1 0 1 é\\n'       | entry 1 of 1: the key's length falls inside a character
      'sketch/1 2 5 2\\n3 0 1 a\\n2 0 1 a\\n' | entry 2 of 2: the key appears twice
      'sketch/1 2 5 2\\n2 0 1 a\\n3 0 1 b\\n' | entry 2 of 2: out of order (entries go by count descending, then by key)
      'sketch/1 2 5 2\\n2 0 1 b\\n2 0 1 a\\n' | entry 2 of 2: out of order (entries go by count descending, then by key)
      'sketch/1 2 5 2\\n3 0 1 a\\n3 0 1 b\\n' | the counts add up to more than the total 5
      'sketch/1 2 5 1\\n4 0 1 a\\n'       | the counts add up to 4, not the total 5, in a sketch that is not full
      'sketch/1 2 5 1\\n5 1 1 a\\n'       | entry 1 of 1: an error in a sketch that is not full
      'sketch/1 2 9 2\\n5 4 1 a\\n3 0 1 b\\n' | entry 1 of 2: the error 4 exceeds the smallest count 3
      'sketch/1 2 5 1\\n5 0 1 a\\nmore'   | there is text after the last entry
      """)
  void decodeRefusesWhatIsNotASketchNamingWhatIsWrong(String text, String problem) {
    String input = text.replace("\\n", "\n");
    assertThatThrownBy(() -> DenialSketch.decode(input))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessage("not a sketch: " + problem);
  }

  @Test
  void decodeRefusesALoneSurrogateInAKey() {
    assertThatThrownBy(() -> DenialSketch.decode("sketch/1 2 1 1\n1 0 3 \uD800\n"))
        .hasMessage("not a sketch: entry 1 of 1: the key is not valid Unicode");
  }

  @Test
  void decodeRefusesTextLongerThanASketchOfItsCapacityCanBe() {
    String text = "sketch/1 1 1 1\n1 0 65536 " + "a".repeat(70_000) + "\n";
    assertThatThrownBy(() -> DenialSketch.decode(text))
        .hasMessage("not a sketch: it is 70026 characters long, more than a sketch of capacity 1 can be");
  }
}
