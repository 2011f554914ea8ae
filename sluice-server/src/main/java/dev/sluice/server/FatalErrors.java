package dev.sluice.server;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorGroup;
import java.util.function.BooleanSupplier;

/**
 * Errors a process does not recover from — {@link OutOfMemoryError}, any other
 * {@link VirtualMachineError}, an event loop that died — end the process at once with
 * {@link #EXIT_CODE}, so that its supervisor restarts it. Left alone, such a process lingers: it
 * holds its port, answers nothing, and may not even act on SIGTERM.
 *
 * <p>{@code -XX:+ExitOnOutOfMemoryError} is the first defence: the JVM exits on the first
 * {@code OutOfMemoryError}, wherever it is thrown, and with the same code. This class is the
 * second, for a JVM started without it: it sees the errors that end a thread, those the HTTP and
 * gRPC handlers meet, those the network layer reports on a connection, and event loops that end.
 * Errors a library catches and logs without passing on stay out of its sight; the flag has none
 * of these gaps.
 *
 * <p>Only a process whose whole purpose is the service ({@code sluice serve}) {@link #install()}s
 * it; a library embedding the server leaves its process to its owner, and {@link #check} does
 * nothing there.
 */
public final class FatalErrors {
  /** The code the JVM itself exits with under {@code -XX:+ExitOnOutOfMemoryError}. */
  public static final int EXIT_CODE = 3;

  private static volatile boolean installed;

  private FatalErrors() {}

  /**
   * Makes fatal errors end the process: a default uncaught exception handler that halts on a
   * {@link VirtualMachineError}, and {@link #check} halting from then on.
   */
  public static synchronized void install() {
    if (installed) {
      return;
    }
    installed = true;
    Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
    Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
      if (isFatal(e)) {
        halt(e, thread);
      }
      if (previous != null) {
        previous.uncaughtException(thread, e);
      } else {
        // What the JVM prints without a default handler. Not the thread group's handler: with no
        // group of its own to defer to, it calls the default handler — this one — again.
        System.err.print("Exception in thread \"" + thread.getName() + "\" ");
        e.printStackTrace(System.err);
      }
    });
  }

  /** True once {@link #install()} has run in this process. */
  public static boolean installed() {
    return installed;
  }

  /** Ends the process if {@code t}, or one of its causes, is fatal and this class is installed. */
  public static void check(Throwable t) {
    if (installed && isFatal(t)) {
      halt(t, Thread.currentThread());
    }
  }

  /**
   * Ends the process, if this class is installed, when one of {@code group}'s event loops ends
   * while {@code expected} says no stop was asked for: the connections it served would hang.
   */
  static void watch(EventExecutorGroup group, BooleanSupplier expected) {
    for (EventExecutor loop : group) {
      loop.terminationFuture().addListener(f -> {
        if (installed && !expected.getAsBoolean()) {
          halt(f.cause() != null ? f.cause() : new IllegalStateException("an event loop ended"), Thread.currentThread());
        }
      });
    }
  }

  /**
   * A handler for the first place of a connection's pipeline: errors the network layer raises
   * while reading (a buffer it cannot allocate) reach it before anything else.
   */
  static ChannelHandler channelHandler() {
    return CHANNEL_HANDLER;
  }

  private static final ChannelHandler CHANNEL_HANDLER = new NetworkErrors();

  @ChannelHandler.Sharable
  private static final class NetworkErrors extends ChannelInboundHandlerAdapter {
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      check(cause);
      ctx.fireExceptionCaught(cause);
    }
  }

  static boolean isFatal(Throwable t) {
    // Bounded: a cause chain can be a cycle.
    for (int i = 0; t != null && i < 16; i++, t = t.getCause()) {
      if (t instanceof VirtualMachineError) {
        return true;
      }
    }
    return false;
  }

  // Written when even the message cannot be built: the heap is full.
  private static final byte[] FALLBACK = ("sluice: fatal: out of memory; exiting with code " + EXIT_CODE + "\n")
      .getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  /** Says what happened in one line, if memory allows, and ends the process. Never returns. */
  private static void halt(Throwable what, Thread where) {
    try {
      System.err.println("sluice: fatal: " + what + " in thread " + where.getName() + "; exiting with code "
          + EXIT_CODE + " so that a supervisor restarts the service");
      System.err.flush();
    } catch (Throwable outOfMemory) {
      try {
        System.err.write(FALLBACK, 0, FALLBACK.length);
        System.err.flush();
      } catch (Throwable ignored) {
        // Exit all the same.
      }
    }
    // halt, not exit: shutdown hooks would drain connections of a process that cannot serve them.
    Runtime.getRuntime().halt(EXIT_CODE);
  }
}
