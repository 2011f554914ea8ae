package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testing.SourceTree;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link in the project's Markdown (README, ARCHITECTURE, docs, the benchmark
 * results) leads somewhere: to a file that exists and, with a {@code #fragment}, to a heading of
 * that file as GitHub names it. Benchmark headings carry their dates, so a section re-measured
 * breaks the links that name it; this test is where that shows.
 */
class DocumentationLinksTest {
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
  private static final Pattern HTML_ANCHOR = Pattern.compile("<a (?:name|id)=\"([^\"]+)\"");

  private final Map<Path, Set<String>> anchors = new HashMap<>();

  @Test
  void everyRelativeLinkLeadsToAFileAndAHeadingThatExist() throws IOException {
    Path root = SourceTree.rootHolding("ARCHITECTURE.md");
    List<String> broken = new ArrayList<>();
    List<Path> pages;
    try (Stream<Path> all = Files.walk(root)) {
      pages = all.filter(p -> p.toString().endsWith(".md"))
          .filter(p -> !root.relativize(p).toString().matches("(.*/)?(target|node_modules|\\.[^/]+)/.*"))
          .sorted().toList();
    }
    assertThat(pages).as("Markdown pages under " + root).hasSizeGreaterThan(10);
    for (Path page : pages) {
      List<String> lines = prose(page);
      for (int i = 0; i < lines.size(); i++) {
        if (lines.get(i) == null) {
          continue;
        }
        Matcher m = LINK.matcher(lines.get(i));
        while (m.find()) {
          String target = m.group(1);
          if (target.matches("^[a-z][a-z0-9+.-]*:.*")) {
            continue; // https:, mailto: and the like
          }
          int hash = target.indexOf('#');
          String file = hash < 0 ? target : target.substring(0, hash);
          Path to = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
          String where = root.relativize(page) + ":" + (i + 1) + ": " + target;
          if (!Files.exists(to)) {
            broken.add(where + " (no such file)");
          } else if (hash >= 0 && to.toString().endsWith(".md") && !anchorsOf(to).contains(target.substring(hash + 1))) {
            broken.add(where + " (no such heading)");
          }
        }
      }
    }
    assertThat(broken).as("links that lead nowhere").isEmpty();
  }

  @Test
  void headingsAreNamedAsGitHubNamesThem() {
    assertThat(slug("5. One path: the call (2026-11-29 03:28–03:48 UTC), and `Redis`"))
        .isEqualTo("5-one-path-the-call-2026-11-29-03280348-utc-and-redis");
    assertThat(slug("The starter's filter, docs/benchmarks.md §5")).isEqualTo("the-starters-filter-docsbenchmarksmd-5");
  }

  /** The page's lines, with those inside fenced code blocks as null. */
  private static List<String> prose(Path page) {
    List<String> out = new ArrayList<>();
    boolean code = false;
    for (String line : SourceTree.read(page).split("\n", -1)) {
      if (line.startsWith("```")) {
        code = !code;
        out.add(null);
      } else {
        out.add(code ? null : line);
      }
    }
    return out;
  }

  private Set<String> anchorsOf(Path page) {
    return anchors.computeIfAbsent(page, p -> {
      Set<String> names = new HashSet<>();
      Map<String, Integer> seen = new HashMap<>();
      for (String line : prose(p)) {
        if (line == null) {
          continue;
        }
        Matcher h = HEADING.matcher(line);
        if (h.matches()) {
          String s = slug(h.group(1));
          Integer n = seen.merge(s, 1, Integer::sum);
          names.add(n == 1 ? s : s + "-" + (n - 1));
        }
        Matcher a = HTML_ANCHOR.matcher(line);
        while (a.find()) {
          names.add(a.group(1));
        }
      }
      return names;
    });
  }

  /**
   * GitHub's name for a heading: lower case, links and code marks dropped, every character but
   * letters, digits, {@code _}, {@code -} and spaces removed, spaces made hyphens.
   */
  static String slug(String heading) {
    String text = heading.replaceAll("\\[([^]]*)]\\([^)]*\\)", "$1").replace("`", "").toLowerCase(Locale.ROOT);
    return text.replaceAll("[^\\p{L}\\p{N}_\\- ]", "").replace(' ', '-');
  }
}
