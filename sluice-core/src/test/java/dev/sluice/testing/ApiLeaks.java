package dev.sluice.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.module.ModuleDescriptor;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.GenericDeclaration;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Finds internal types in a module's API: a public or protected member of a public type of an
 * exported package whose signature (parameters, return type, exceptions, field type, supertypes,
 * type parameters' bounds, generic arguments at any depth) names a type of a package that its
 * module does not export to everyone. A package exported only to named modules ({@code exports p
 * to m}) counts as internal: a user of the API could not name the type.
 *
 * <p>The modules are read from their compiled {@code module-info.class}; the classes are loaded
 * from the class path the tests run on, so the check needs no module layer. Types of other
 * Sluice modules are judged by their own descriptors (a store's API naming {@code
 * dev.sluice.internal} is a leak); a JDK type by its module's exports. A library without a
 * descriptor of its own is taken as exported: what a module re-exports of its dependencies is
 * javac's business ({@code -Xlint:exports}, on in the build).
 */
public final class ApiLeaks {
  /** A compiled module: its descriptor and where its classes are (a directory or a jar). */
  public record CompiledModule(ModuleDescriptor descriptor, Path root) {
    public String name() {
      return descriptor.name();
    }

    /** Whether {@code pkg} is one of this module's and exported to every module. */
    boolean exportsToAll(String pkg) {
      return descriptor.exports().stream().anyMatch(e -> !e.isQualified() && e.source().equals(pkg));
    }

    boolean contains(String pkg) {
      return descriptor.packages().contains(pkg);
    }
  }

  private ApiLeaks() {}

  /** The module that {@code anyClass} was loaded from, read from its compiled descriptor. */
  public static CompiledModule moduleOf(Class<?> anyClass) {
    Path root;
    try {
      root = Path.of(anyClass.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    return new CompiledModule(readDescriptor(root), root);
  }

  private static ModuleDescriptor readDescriptor(Path root) {
    try (FileSystem jar = Files.isDirectory(root) ? null : FileSystems.newFileSystem(root)) {
      Path top = jar == null ? root : jar.getPath("/");
      // javac records only the exported and opened packages in module-info.class (the jar tool
      // adds the others); the internal ones are found where the classes are.
      Set<String> packages = new TreeSet<>();
      try (Stream<Path> files = Files.walk(top)) {
        files.filter(f -> f.toString().endsWith(".class") && f.getParent() != null && !f.getParent().equals(top)
            && !f.startsWith(top.resolve("META-INF")))
            .forEach(f -> packages.add(top.relativize(f.getParent()).toString().replace('/', '.')));
      }
      try (InputStream in = Files.newInputStream(top.resolve("module-info.class"))) {
        return ModuleDescriptor.read(in, () -> packages);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("no module descriptor in " + root, e);
    }
  }

  /**
   * Every leak of {@code module}'s API, one line each, sorted; empty if there is none.
   *
   * @param others the modules whose packages {@code module}'s API may name (those it reads)
   */
  public static List<String> find(CompiledModule module, CompiledModule... others) {
    return find(module, classesOfExportedPackages(module), others);
  }

  /**
   * The leaks of {@code module}'s API among {@code classes}: those of them that are API (public
   * types of packages the module exports to everyone) are checked.
   */
  public static List<String> find(CompiledModule module, List<Class<?>> classes, CompiledModule... others) {
    List<CompiledModule> modules = new ArrayList<>(List.of(others));
    modules.add(0, module);
    Set<String> leaks = new TreeSet<>();
    for (Class<?> c : classes) {
      if (!module.exportsToAll(c.getPackageName()) || !isApi(c)) {
        continue;
      }
      String type = c.getName();
      check(modules, leaks, type + " extends", c.getGenericSuperclass());
      for (Type t : c.getGenericInterfaces()) {
        check(modules, leaks, type + " implements", t);
      }
      checkTypeParameters(modules, leaks, type, c);
      for (Field f : c.getDeclaredFields()) {
        if (visible(f)) {
          check(modules, leaks, "field " + type + "." + f.getName(), f.getGenericType());
        }
      }
      for (Method m : c.getDeclaredMethods()) {
        if (visible(m) && !m.isBridge()) {
          checkExecutable(modules, leaks, type + "." + m.getName() + "(…)", m);
          check(modules, leaks, type + "." + m.getName() + "(…) returns", m.getGenericReturnType());
        }
      }
      for (Constructor<?> k : c.getDeclaredConstructors()) {
        if (visible(k)) {
          checkExecutable(modules, leaks, "new " + type + "(…)", k);
        }
      }
    }
    return List.copyOf(leaks);
  }

  private static void checkExecutable(List<CompiledModule> modules, Set<String> leaks, String where, Executable e) {
    checkTypeParameters(modules, leaks, where, e);
    for (Type t : e.getGenericParameterTypes()) {
      check(modules, leaks, where + " takes", t);
    }
    for (Type t : e.getGenericExceptionTypes()) {
      check(modules, leaks, where + " throws", t);
    }
  }

  private static void checkTypeParameters(List<CompiledModule> modules, Set<String> leaks, String where,
      GenericDeclaration d) {
    for (TypeVariable<?> v : d.getTypeParameters()) {
      for (Type bound : v.getBounds()) {
        check(modules, leaks, where + " <" + v.getName() + " extends …>", bound);
      }
    }
  }

  /** Adds a line for each type named in {@code t} (at any depth) that is internal. */
  private static void check(List<CompiledModule> modules, Set<String> leaks, String where, Type t) {
    if (t == null || t instanceof TypeVariable<?>) {
      // A type variable's bounds are checked where it is declared.
      return;
    }
    if (t instanceof Class<?> c) {
      Class<?> named = c;
      while (named.isArray()) {
        named = named.getComponentType();
      }
      if (!named.isPrimitive()) {
        String name = named.getName();
        internalBecause(modules, named).ifPresent(why -> leaks.add(where + " " + name + ": " + why));
      }
    } else if (t instanceof ParameterizedType p) {
      check(modules, leaks, where, p.getRawType());
      check(modules, leaks, where, p.getOwnerType());
      for (Type a : p.getActualTypeArguments()) {
        check(modules, leaks, where, a);
      }
    } else if (t instanceof WildcardType w) {
      Stream.concat(Stream.of(w.getUpperBounds()), Stream.of(w.getLowerBounds()))
          .forEach(b -> check(modules, leaks, where, b));
    } else if (t instanceof GenericArrayType a) {
      check(modules, leaks, where, a.getGenericComponentType());
    }
  }

  /** Why {@code c} cannot be named by a user of the API, if it cannot. */
  private static Optional<String> internalBecause(List<CompiledModule> modules, Class<?> c) {
    String pkg = c.getPackageName();
    for (CompiledModule m : modules) {
      if (m.contains(pkg)) {
        if (!m.exportsToAll(pkg)) {
          return Optional.of("package " + pkg + " is not exported by " + m.name());
        }
        return isApi(c) ? Optional.empty() : Optional.of("the type is not public");
      }
    }
    Module jdk = c.getModule();
    if (jdk.isNamed() && !jdk.isExported(pkg)) {
      return Optional.of("package " + pkg + " is not exported by " + jdk.getName());
    }
    return Optional.empty();
  }

  /** Whether code outside the package can name {@code c}: public, in public or protected types. */
  private static boolean isApi(Class<?> c) {
    if (c.isAnonymousClass() || c.isLocalClass() || c.isSynthetic()) {
      return false;
    }
    for (Class<?> k = c; k != null; k = k.getDeclaringClass()) {
      int m = k.getModifiers();
      boolean nested = k.getDeclaringClass() != null;
      if (!Modifier.isPublic(m) && !(nested && Modifier.isProtected(m))) {
        return false;
      }
    }
    return true;
  }

  private static boolean visible(Member m) {
    return !m.isSynthetic() && (Modifier.isPublic(m.getModifiers()) || Modifier.isProtected(m.getModifiers()));
  }

  /** The classes of the packages {@code module} exports to everyone, loaded without initializing them. */
  private static List<Class<?>> classesOfExportedPackages(CompiledModule module) {
    List<Class<?>> out = new ArrayList<>();
    ClassLoader loader = ApiLeaks.class.getClassLoader();
    try (FileSystem jar = Files.isDirectory(module.root()) ? null : FileSystems.newFileSystem(module.root())) {
      Path root = jar == null ? module.root() : jar.getPath("/");
      for (ModuleDescriptor.Exports e : module.descriptor().exports()) {
        if (e.isQualified()) {
          continue;
        }
        Path dir = root.resolve(e.source().replace('.', '/'));
        try (Stream<Path> files = Files.list(dir)) {
          for (Path f : files.sorted(Comparator.naturalOrder()).toList()) {
            String n = f.getFileName().toString();
            if (n.endsWith(".class") && !n.equals("package-info.class")) {
              out.add(Class.forName(e.source() + "." + n.substring(0, n.length() - ".class".length()), false, loader));
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
    return out;
  }
}
