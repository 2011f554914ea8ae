package dev.sluice.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * The number of cases of the fuzz properties, set from the command line rather than written in
 * each {@code @Property}: a few thousand per surface (HTTP API, gRPC, configuration loader) by
 * default, so that CI stays fast, and as many as {@code -Dsluice.fuzz.tries=N} asks for in the long
 * mode. A surface's properties share its cases: each says its share with {@link Share}.
 *
 * <p>Use it on a class with {@code @AddLifecycleHook(FuzzCases.class)}. The long mode, for every
 * surface:
 *
 * <pre>{@code
 * ./mvnw -B -ntp -pl sluice-server -am verify -Dsluice.fuzz.tries=100000 \
 *     -Dtest='*Fuzz*,GrpcBadBytesProperties' -Dsurefire.failIfNoSpecifiedTests=false
 * }</pre>
 */
public final class FuzzCases implements AroundPropertyHook {
  /** The system property that sets the cases per surface. */
  public static final String PROPERTY = "sluice.fuzz.tries";
  /** Cases per surface when {@value #PROPERTY} is not set. */
  public static final int CI_CASES = 2_000;

  /** A property's share of its surface's cases, in percent. */
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.METHOD)
  public @interface Share {
    int value();
  }

  /** The cases per surface in this run. */
  public static int perSurface() {
    return Integer.getInteger(PROPERTY, CI_CASES);
  }

  /** Whether this run is the long mode ({@value #PROPERTY} given). */
  public static boolean longMode() {
    return System.getProperty(PROPERTY) != null;
  }

  /** {@code percent} of the cases per surface, at least one. */
  public static int share(int percent) {
    return Math.max(1, (int) ((long) perSurface() * percent / 100));
  }

  /** Registered on a class, the hook applies to the class's properties. */
  @Override
  public PropagationMode propagateTo() {
    return PropagationMode.DIRECT_DESCENDANTS;
  }

  @Override
  public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
    Share share = context.findAnnotation(Share.class)
        .orElseThrow(() -> new IllegalStateException(context.label() + " needs @FuzzCases.Share"));
    context.attributes().setTries(share(share.value()));
    PropertyExecutionResult r = property.execute();
    // One line per property, so that a run says how many cases it tried.
    System.out.println("fuzz: " + context.containerClass().getSimpleName() + "." + context.label() + ": "
        + r.countTries() + " cases, " + r.status());
    return r;
  }
}
