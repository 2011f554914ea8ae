package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on a loopback port in front of a server, which a test can make misbehave as a
 * network or a half-broken server does: {@link #stall()} stops forwarding (connections stay open,
 * nothing arrives either way), {@link #cutReplies()} forwards part of each reply and then resets
 * the connection, and {@link #heal()} forwards normally again. Clients connect to {@link #port()}.
 *
 * <p>One thread (named {@code sluice-testkit-fault-proxy-<port>}) serves every connection, so the
 * proxy adds a fixed, known thread to the JVM however many connections it carries.
 */
public final class FaultProxy implements AutoCloseable {
  private enum Mode { FORWARD, STALL, CUT }

  private static final int BUFFER = 64 * 1024;

  private final int targetPort;
  private final Selector selector;
  private final ServerSocketChannel listener;
  private final Thread thread;
  private final List<Pair> pairs = new ArrayList<>();
  private final AtomicInteger accepted = new AtomicInteger();
  private final AtomicInteger cut = new AtomicInteger();
  private volatile Mode mode = Mode.FORWARD;
  /** A request whose reply is cut once (see {@link #cutReplyTo}); null when none is armed. */
  private volatile byte[] cutAfter;
  private volatile boolean open = true;
  private Mode applied = Mode.FORWARD;

  private FaultProxy(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.selector = Selector.open();
    this.listener = ServerSocketChannel.open();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    listener.configureBlocking(false);
    listener.register(selector, SelectionKey.OP_ACCEPT);
    this.thread = new Thread(this::run, "sluice-testkit-fault-proxy-" + port());
    thread.setDaemon(true);
  }

  /** Starts a proxy on a free loopback port forwarding to 127.0.0.1:{@code targetPort}. */
  public static FaultProxy start(int targetPort) {
    try {
      FaultProxy p = new FaultProxy(targetPort);
      p.thread.start();
      return p;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start a proxy to port " + targetPort, e);
    }
  }

  /** The port clients connect to. */
  public int port() {
    return listener.socket().getLocalPort();
  }

  /** {@code redis://127.0.0.1:<port>}: the server, through the proxy. */
  public String uri() {
    return "redis://127.0.0.1:" + port();
  }

  /**
   * Stops forwarding in both directions: the bytes already sent stay in the proxy's and the
   * kernel's buffers, connections stay open (new ones are accepted and not served), as with a
   * frozen network path or a server that stopped reading.
   */
  public void stall() {
    setMode(Mode.STALL);
  }

  /**
   * From now on, every connection forwards requests as usual but, as soon as the server answers,
   * passes on only the first half of the bytes it read and then resets both sides (RST): a
   * connection dropped mid-reply. Clients that reconnect meet the same until {@link #heal()}.
   */
  public void cutReplies() {
    setMode(Mode.CUT);
  }

  /**
   * Loses one reply: the server's first answer on the connection whose request bytes next
   * contain {@code request} is dropped, and the connection closed in order (FIN) instead; once.
   * Everything else is forwarded as usual. The request arrives whole, so the server runs it; only
   * its reply is lost (the needle is looked for in each read, so it should be a few bytes of one
   * command).
   */
  public void cutReplyTo(byte[] request) {
    cutAfter = request.clone();
  }

  /** Whether the reply armed by {@link #cutReplyTo} is still to be cut. */
  public boolean cutReplyPending() {
    return cutAfter != null;
  }

  /** Forwards normally again, including what waited during a {@link #stall()}. */
  public void heal() {
    setMode(Mode.FORWARD);
  }

  /** Connections accepted so far. */
  public int connectionsAccepted() {
    return accepted.get();
  }

  /** Connections reset mid-reply so far. */
  public int connectionsCut() {
    return cut.get();
  }

  private void setMode(Mode m) {
    mode = m;
    selector.wakeup();
  }

  @Override
  public void close() {
    open = false;
    selector.wakeup();
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void run() {
    try {
      while (open) {
        selector.select(100);
        if (mode != applied) {
          applied = mode;
          for (Pair p : new ArrayList<>(pairs)) {
            p.interest();
          }
        }
        for (SelectionKey key : selector.selectedKeys()) {
          if (!key.isValid()) {
            continue;
          }
          if (key.isAcceptable()) {
            accept();
            continue;
          }
          Pair p = (Pair) key.attachment();
          try {
            p.serve(key);
          } catch (IOException e) {
            p.close(false);
          }
        }
        selector.selectedKeys().clear();
      }
    } catch (IOException | ClosedSelectorException e) {
      // Closing.
    } finally {
      for (Pair p : new ArrayList<>(pairs)) {
        p.close(false);
      }
      try {
        listener.close();
        selector.close();
      } catch (IOException ignored) {
        // Nothing left to do.
      }
    }
  }

  private void accept() throws IOException {
    SocketChannel client = listener.accept();
    if (client == null) {
      return;
    }
    accepted.incrementAndGet();
    SocketChannel server;
    try {
      // A loopback connect: refused or done at once, so blocking here costs nothing.
      server = SocketChannel.open(new InetSocketAddress("127.0.0.1", targetPort));
    } catch (IOException refused) {
      reset(client);
      return;
    }
    client.configureBlocking(false);
    server.configureBlocking(false);
    client.setOption(StandardSocketOptions.TCP_NODELAY, true);
    server.setOption(StandardSocketOptions.TCP_NODELAY, true);
    Pair p = new Pair(client, server);
    p.clientKey = client.register(selector, 0, p);
    p.serverKey = server.register(selector, 0, p);
    pairs.add(p);
    p.interest();
  }

  private static void reset(SocketChannel c) {
    try {
      c.setOption(StandardSocketOptions.SO_LINGER, 0);
    } catch (IOException ignored) {
      // Closed already.
    }
    try {
      c.close();
    } catch (IOException ignored) {
      // Same.
    }
  }

  /** One client connection and its connection to the server. */
  private final class Pair {
    final SocketChannel client;
    final SocketChannel server;
    /** Client to server, and server to client: filled by reads, drained by writes. */
    final ByteBuffer up = ByteBuffer.allocate(BUFFER);
    final ByteBuffer down = ByteBuffer.allocate(BUFFER);
    SelectionKey clientKey;
    SelectionKey serverKey;
    boolean closed;
    /** The server's next reply on this connection is cut (see {@link #cutReplyTo}). */
    boolean cutNext;

    Pair(SocketChannel client, SocketChannel server) {
      this.client = client;
      this.server = server;
    }

    void serve(SelectionKey key) throws IOException {
      boolean fromClient = key == clientKey;
      if (key.isReadable()) {
        ByteBuffer into = fromClient ? up : down;
        int n = (fromClient ? client : server).read(into);
        if (n < 0) {
          close(true);
          return;
        }
        byte[] needle = cutAfter;
        if (fromClient && n > 0 && needle != null && contains(into, into.position() - n, into.position(), needle)) {
          cutAfter = null;
          cutNext = true;
        }
        if (!fromClient && n > 0 && cutNext) {
          // The reply is dropped and the connection closed in order (FIN), as when a server or a
          // middlebox closes a connection between running a command and answering it.
          into.clear();
          cut.incrementAndGet();
          close(true);
          return;
        }
        if (!fromClient && n > 0 && mode == Mode.CUT) {
          // Half of what the server said, then a reset: the client holds a partial reply.
          into.flip();
          into.limit(into.position() + Math.max(0, into.remaining() / 2));
          client.write(into);
          cut.incrementAndGet();
          close(false);
          return;
        }
      }
      if (mode != Mode.STALL) {
        drain(up, server);
        drain(down, client);
      }
      interest();
    }

    private static boolean contains(ByteBuffer b, int from, int to, byte[] needle) {
      for (int i = Math.max(0, from - needle.length + 1); i + needle.length <= to; i++) {
        int j = 0;
        while (j < needle.length && b.get(i + j) == needle[j]) {
          j++;
        }
        if (j == needle.length) {
          return true;
        }
      }
      return false;
    }

    private void drain(ByteBuffer buf, SocketChannel to) throws IOException {
      if (buf.position() == 0) {
        return;
      }
      buf.flip();
      to.write(buf);
      buf.compact();
    }

    /** Read while there is room, write while there is something to write; nothing while stalled. */
    void interest() {
      if (closed) {
        return;
      }
      boolean flow = mode != Mode.STALL;
      try {
        if (flow) {
          // Bytes that waited out a stall go first.
          drain(up, server);
          drain(down, client);
        }
        clientKey.interestOps(!flow ? 0
            : (up.hasRemaining() ? SelectionKey.OP_READ : 0) | (down.position() > 0 ? SelectionKey.OP_WRITE : 0));
        serverKey.interestOps(!flow ? 0
            : (down.hasRemaining() ? SelectionKey.OP_READ : 0) | (up.position() > 0 ? SelectionKey.OP_WRITE : 0));
      } catch (IOException e) {
        close(false);
      }
    }

    /** Closes both sides: with a FIN when one side ended, with a reset otherwise. */
    void close(boolean orderly) {
      if (closed) {
        return;
      }
      closed = true;
      pairs.remove(this);
      clientKey.cancel();
      serverKey.cancel();
      if (orderly) {
        try {
          // What the other side had sent before this one ended still reaches it, as far as it goes at once.
          drain(up, server);
          drain(down, client);
        } catch (IOException ignored) {
          // The other side is gone too.
        }
        try {
          client.close();
          server.close();
        } catch (IOException ignored) {
          // Closed already.
        }
      } else {
        reset(client);
        reset(server);
      }
    }
  }
}
