package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * sluice-bom stays complete: every module of the build that is published is in it, at the
 * build's version, and nothing else of the build's (its third-party pins) comes along with it.
 * A new module fails this test until it is listed in the BOM or among the unpublished.
 */
class BomTest {
  static final Path ROOT = Path.of("..");
  /** Built, never published: tests, benchmarks, and the BOM itself. */
  static final Set<String> UNPUBLISHED = Set.of("sluice-bom", "sluice-testkit", "sluice-bench", "sluice-redis-compat",
      "sluice-spring-boot-starter-4.1", "sluice-bench-boot", "examples/spring-boot", "examples/spring-boot-4.1");

  static Document read(Path pom) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    return f.newDocumentBuilder().parse(pom.toFile());
  }

  static List<Element> children(Node parent, String name) {
    List<Element> out = new ArrayList<>();
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && e.getTagName().equals(name)) {
        out.add(e);
      }
    }
    return out;
  }

  static String text(Node parent, String name) {
    List<Element> es = children(parent, name);
    return es.isEmpty() ? null : es.get(0).getTextContent().strip();
  }

  static Map<String, Element> bomEntries(Document bom) {
    Element dm = children(bom.getDocumentElement(), "dependencyManagement").get(0);
    Map<String, Element> out = new LinkedHashMap<>();
    for (Element d : children(children(dm, "dependencies").get(0), "dependency")) {
      out.put(text(d, "artifactId"), d);
    }
    return out;
  }

  @Test
  void everyPublishedModuleIsInTheBomAtTheBuildsVersion() throws Exception {
    Document parent = read(ROOT.resolve("pom.xml"));
    Document bom = read(ROOT.resolve("sluice-bom/pom.xml"));
    List<String> modules = children(children(parent.getDocumentElement(), "modules").get(0), "module").stream()
        .map(e -> e.getTextContent().strip()).toList();
    assertThat(modules).contains("sluice-bom", "sluice-testkit", "sluice-bench", "sluice-redis-compat");
    Map<String, Element> entries = bomEntries(bom);
    for (String m : modules) {
      if (UNPUBLISHED.contains(m)) {
        assertThat(entries).as("%s is not published, so not in the BOM", m).doesNotContainKey(m);
        continue;
      }
      assertThat(entries).as("the published module %s is in sluice-bom (or listed here as unpublished)", m)
          .containsKey(m);
      // A published module ships its sources and javadoc beside its jar.
      String pom = java.nio.file.Files.readString(ROOT.resolve(m).resolve("pom.xml"));
      assertThat(pom).as(m).contains("<artifactId>maven-source-plugin</artifactId>")
          .contains("<artifactId>maven-javadoc-plugin</artifactId>");
    }
    for (Element d : entries.values()) {
      assertThat(text(d, "groupId")).isEqualTo("dev.sluice");
      assertThat(text(d, "version")).isEqualTo("${project.version}");
      assertThat(text(d, "scope")).isNull();
    }
  }

  @Test
  void theBomHasTheBuildsVersionAndNoParentWhosePinsItWouldBringAlong() throws Exception {
    Document parent = read(ROOT.resolve("pom.xml"));
    Element bom = read(ROOT.resolve("sluice-bom/pom.xml")).getDocumentElement();
    assertThat(children(bom, "parent")).isEmpty();
    assertThat(text(bom, "groupId")).isEqualTo(text(parent.getDocumentElement(), "groupId"));
    assertThat(text(bom, "version")).isEqualTo(text(parent.getDocumentElement(), "version"));
    assertThat(text(bom, "packaging")).isEqualTo("pom");
    assertThat(bomEntries(read(ROOT.resolve("sluice-bom/pom.xml")))).allSatisfy((name, d) ->
        assertThat(name).startsWith("sluice-"));
  }
}
