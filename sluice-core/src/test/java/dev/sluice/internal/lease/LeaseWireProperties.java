package dev.sluice.internal.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.spi.LeaseBoard;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/** Usage reports and size tables: what is written is read back, within the bound, and anything else is refused by name. */
class LeaseWireProperties {
  static final int MAX_KEY = 4096;

  @Provide
  Arbitrary<List<UsageReport.Entry>> entries() {
    return entry().list().ofMaxSize(300);
  }

  Arbitrary<UsageReport.Entry> entry() {
    Arbitrary<String> rules = Arbitraries.strings().withCharRange('a', 'z').withChars('.', '_').ofMinLength(1).ofMaxLength(40);
    Arbitrary<String> keys = Arbitraries.strings().all().ofMinLength(1).ofMaxLength(60)
        .filter(k -> k.chars().noneMatch(c -> Character.isSurrogate((char) c)));
    Arbitrary<Long> counts = Arbitraries.longs().between(0, Long.MAX_VALUE).edgeCases(e -> e.includeOnly(0L, 127L, 128L,
        Long.MAX_VALUE));
    return Combinators.combine(rules, keys, counts, counts, counts, counts).as(UsageReport.Entry::new);
  }

  @Property(tries = 200)
  void aReportIsReadBackAsWrittenAsFarAsItFits(@ForAll("entries") List<UsageReport.Entry> entries,
      @ForAll long fingerprint, @ForAll @LongRange(min = 0, max = 100_000) long elapsed,
      @ForAll @IntRange(min = 32, max = LeaseBoard.MAX_ENTRY_BYTES) int maxBytes) {
    UsageReport r = new UsageReport(elapsed, fingerprint, entries);
    UsageReport.Encoded e = r.encode(maxBytes);
    assertThat(e.bytes().length).isLessThanOrEqualTo(maxBytes);
    UsageReport back = UsageReport.decode(e.bytes(), MAX_KEY);
    assertThat(back.elapsedMillis()).isEqualTo(elapsed);
    assertThat(back.fingerprint()).isEqualTo(fingerprint);
    // The hottest first: a prefix of the entries, and the next one would not have fitted.
    assertThat(back.entries()).isEqualTo(entries.subList(0, e.entries()));
    if (e.entries() < entries.size()) {
      List<UsageReport.Entry> one = new ArrayList<>(back.entries());
      one.add(entries.get(e.entries()));
      assertThat(new UsageReport(elapsed, fingerprint, one).encode(Integer.MAX_VALUE).bytes().length)
          .isGreaterThan(maxBytes);
    }
  }

  @Property(tries = 200)
  void aSizeTableIsReadBackAsWritten(@ForAll("entries") List<UsageReport.Entry> from, @ForAll long fingerprint) {
    List<SizeTable.Entry> entries = from.stream().limit(40).map(e -> new SizeTable.Entry(e.rule(), e.key(), e.held()))
        .toList();
    SizeTable t = new SizeTable(fingerprint, entries);
    assertThat(SizeTable.decode(t.encode(), MAX_KEY)).isEqualTo(t);
  }

  @Property(tries = 1000)
  void anyCutOrFlippedByteIsRefusedOrReadAsAValidReport(@ForAll("entries") List<UsageReport.Entry> entries,
      @ForAll @IntRange(min = 0, max = 10_000) int at, @ForAll byte flip) {
    byte[] b = new UsageReport(5, 7, entries).encode(LeaseBoard.MAX_ENTRY_BYTES).bytes();
    int i = at % b.length;
    byte[] cut = Arrays.copyOf(b, i);
    byte[] flipped = b.clone();
    flipped[i] ^= flip;
    for (byte[] bad : List.of(cut, flipped)) {
      try {
        UsageReport r = UsageReport.decode(bad, MAX_KEY);
        // What decodes re-encodes to the same bytes: nothing was read past or around.
        assertThat(r.encode(Integer.MAX_VALUE).bytes()).isEqualTo(bad);
      } catch (IllegalArgumentException e) {
        assertThat(e.getMessage()).isNotBlank();
      }
    }
  }

  @Test
  void badInputIsRefusedNamingWhatIsWrong() {
    byte[] ok = new UsageReport(1, 2, List.of(new UsageReport.Entry("r", "k", 1, 2, 3, 4))).encode(100).bytes();
    byte[] otherVersion = ok.clone();
    otherVersion[0] = 9;
    assertThatThrownBy(() -> UsageReport.decode(otherVersion, MAX_KEY)).hasMessageContaining("version 9");
    assertThatThrownBy(() -> UsageReport.decode(Arrays.copyOf(ok, ok.length - 1), MAX_KEY)).hasMessageContaining("truncated");
    assertThatThrownBy(() -> UsageReport.decode(new byte[LeaseBoard.MAX_ENTRY_BYTES + 1], MAX_KEY))
        .hasMessageContaining("at most 8192 bytes");
    byte[] longKey = new UsageReport(1, 2, List.of(new UsageReport.Entry("r", "k".repeat(5000), 1, 2, 3, 4)))
        .encode(LeaseBoard.MAX_ENTRY_BYTES).bytes();
    assertThatThrownBy(() -> UsageReport.decode(longKey, MAX_KEY)).hasMessageContaining("a key").hasMessageContaining("at most 4096");
    byte[] badUtf8 = new UsageReport(1, 2, List.of(new UsageReport.Entry("r", "é", 1, 2, 3, 4))).encode(100).bytes();
    int e = new String(badUtf8, StandardCharsets.ISO_8859_1).indexOf('\u00c3');
    badUtf8[e + 1] = (byte) 0x41; // a lead byte without its continuation
    assertThatThrownBy(() -> UsageReport.decode(badUtf8, MAX_KEY)).hasMessageContaining("not valid UTF-8");
    assertThatThrownBy(() -> new UsageReport(1, 2, List.of(new UsageReport.Entry("r", "k", -1, 0, 0, 0))).encode(100))
        .hasMessageContaining("must not be negative");
    List<SizeTable.Entry> many = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      many.add(new SizeTable.Entry("rule", "key-" + i, i));
    }
    assertThatThrownBy(() -> new SizeTable(0, many).encode()).hasMessageContaining("at most 8192");
  }
}
