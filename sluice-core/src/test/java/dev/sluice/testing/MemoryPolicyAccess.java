package dev.sluice.testing;

import dev.sluice.Rule;
import dev.sluice.memory.MemoryStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;

/**
 * The memory store's package-private ban and audit methods (its policy store's), for tests of
 * other modules. Tests run from the class path, where reflection may reach them.
 */
public final class MemoryPolicyAccess {
  private MemoryPolicyAccess() {}

  public static boolean ban(MemoryStore store, Rule rule, String key, long untilMicros) {
    return (Boolean) call(store, "banKey", new Class<?>[] {Rule.class, String.class, long.class}, rule, key,
        untilMicros);
  }

  public static void unban(MemoryStore store, String rule, String key) {
    call(store, "unbanKey", new Class<?>[] {String.class, String.class}, rule, key);
  }

  @SuppressWarnings("unchecked")
  public static List<String> audit(MemoryStore store, String rule, String key) {
    return (List<String>) call(store, "audit", new Class<?>[] {String.class, String.class}, rule, key);
  }

  private static Object call(MemoryStore store, String name, Class<?>[] types, Object... args) {
    try {
      Method m = MemoryStore.class.getDeclaredMethod(name, types);
      m.setAccessible(true);
      return m.invoke(store, args);
    } catch (InvocationTargetException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }
}
