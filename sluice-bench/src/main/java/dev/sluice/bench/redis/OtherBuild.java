package dev.sluice.bench.redis;

import dev.sluice.spi.Store;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Another build of sluice-redis in the same process: the classes and resources of package
 * {@code dev.sluice.redis} are taken first from a directory (for example the previous version of
 * the decision script, compiled from an older commit), everything else from this build. Two
 * versions of the store then run alternately against one server, so their figures share the
 * machine's state.
 *
 * The package {@code dev.sluice.algorithm} (the Java readers of stored values) is taken from the
 * directory as well when it holds it: compile it from the same commit when the layout differs.
 *
 * <pre>
 * git archive OLD sluice-redis/src/main | tar -x -C /tmp/other
 * javac -cp sluice-bench/target/sluice-bench.jar -d /tmp/other/classes $(find /tmp/other -name '*.java')
 * cp -r /tmp/other/sluice-redis/src/main/resources/. /tmp/other/classes/
 * java -Dsluice.otherRedisClasses=/tmp/other/classes -cp sluice-bench/target/sluice-bench.jar \
 *     dev.sluice.bench.RedisLoad --contenders sluice_other,sluice,bucket4j ...
 * </pre>
 */
final class OtherBuild {
  private static final String PACKAGE = "dev.sluice.redis.";
  private static final String RESOURCES = "dev/sluice/redis/";
  /**
   * The Java readers of stored values, taken from the directory too when it holds them (compiled
   * from the same commit), so that a build of another value layout reads its own values.
   */
  private static final String READERS = "dev.sluice.algorithm.";

  private final Path dir;
  private final ClassLoader loader;

  private OtherBuild(Path dir) {
    this.dir = dir;
    this.loader = new ChildFirst(dir, OtherBuild.class.getClassLoader());
  }

  /** @throws IllegalArgumentException when {@code -Dsluice.otherRedisClasses} names no directory */
  static OtherBuild fromProperty() {
    String d = System.getProperty("sluice.otherRedisClasses");
    if (d == null || !Files.isDirectory(Path.of(d, "dev", "sluice", "redis"))) {
      throw new IllegalArgumentException("the *_other contenders need -Dsluice.otherRedisClasses=<a directory holding "
          + "dev/sluice/redis/*.class and its .lua files>, was " + d);
    }
    return new OtherBuild(Path.of(d));
  }

  /** That build's {@code RedisStore.builder(uri)[.callsInFlight(depth)][.minBatch(minBatch)].build()}. */
  Store redisStore(String uri, int depth, Integer minBatch) {
    try {
      Class<?> store = loader.loadClass(PACKAGE + "RedisStore");
      Class<?> builderType = loader.loadClass(PACKAGE + "RedisStore$Builder");
      Object builder = store.getMethod("builder", String.class).invoke(null, uri);
      if (depth >= 0) {
        builderType.getMethod("callsInFlight", int.class).invoke(builder, depth);
      }
      if (minBatch != null) {
        builderType.getMethod("minBatch", int.class).invoke(builder, minBatch);
      }
      return (Store) builderType.getMethod("build").invoke(builder);
    } catch (InvocationTargetException e) {
      throw new IllegalStateException("the other build's store failed to start", e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("the other build has no usable RedisStore", e);
    }
  }

  @Override
  public String toString() {
    return "sluice-redis from " + dir;
  }

  /** Loads dev.sluice.redis from the directory first; everything else from the parent. */
  private static final class ChildFirst extends URLClassLoader {
    ChildFirst(Path dir, ClassLoader parent) {
      super(new URL[] {url(dir)}, parent);
    }

    private static URL url(Path dir) {
      try {
        return dir.toUri().toURL();
      } catch (MalformedURLException e) {
        throw new IllegalArgumentException("not a directory: " + dir, e);
      }
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (!name.startsWith(PACKAGE) && !(name.startsWith(READERS) && findResource(name.replace('.', '/') + ".class") != null)) {
        return super.loadClass(name, resolve);
      }
      synchronized (getClassLoadingLock(name)) {
        Class<?> c = findLoadedClass(name);
        if (c == null) {
          c = findClass(name);
        }
        if (resolve) {
          resolveClass(c);
        }
        return c;
      }
    }

    @Override
    public URL getResource(String name) {
      if (name.startsWith(RESOURCES)) {
        URL own = findResource(name);
        if (own != null) {
          return own;
        }
      }
      return super.getResource(name);
    }

    @Override
    public InputStream getResourceAsStream(String name) {
      URL u = getResource(name);
      try {
        return u == null ? null : u.openStream();
      } catch (IOException e) {
        return null;
      }
    }
  }
}
