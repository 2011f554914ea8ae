package dev.sluice.testing.leaky;

import dev.sluice.testing.leaky.hidden.HiddenBase;
import dev.sluice.testing.leaky.hidden.HiddenException;
import dev.sluice.testing.leaky.hidden.HiddenValue;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * A deliberately broken API, for {@code ApiLeaksTest}: its package plays an exported one, and
 * each public or protected member below names a type of {@code hidden}, which plays an internal
 * one, in one of the places a signature can name a type. The members at the end do not leak.
 */
public class LeakyApi extends HiddenBase {
  public HiddenValue field;

  public LeakyApi() throws HiddenException {}

  public HiddenValue returned() {
    return null;
  }

  public void takes(int n, HiddenValue[] values) {}

  public Map<String, List<? extends HiddenValue>> deepInAGenericArgument() {
    return null;
  }

  protected <T extends HiddenValue> T bound() {
    return null;
  }

  /** A nested API type implementing an interface of an internal type argument. */
  public static final class Nested implements Supplier<HiddenValue> {
    @Override
    public HiddenValue get() {
      return null;
    }
  }

  // Not leaks: invisible from outside, or naming no internal type.

  HiddenValue packagePrivate() {
    return null;
  }

  private HiddenValue secret;

  public String fine(List<String> names) {
    return secret == null ? packagePrivate() + "" : names.toString();
  }

  private static final class PrivateNested implements Supplier<HiddenValue> {
    @Override
    public HiddenValue get() {
      return null;
    }
  }
}
