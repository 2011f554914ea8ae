package dev.sluice.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2FrameListener;
import io.netty.handler.codec.http2.Http2FrameListenerDecorator;
import io.netty.handler.codec.http2.Http2Headers;

/**
 * Lets a request whose path has a malformed percent-escape ({@code %ZZ}, {@code %2}, a trailing
 * {@code %}) reach the API, which names the segment and the escape at fault
 * ({@code invalid_key}). Armeria refuses such a path before routing, with a bare 400 and no trace
 * of the path. Here each {@code %} that starts no escape is written {@code %25}, so that Armeria
 * routes the request, and the path as sent travels in {@link #RAW_PATH}, which the API reads
 * instead of the routed path. The header is removed from every request that does not need it, so
 * a client cannot set it.
 *
 * <p>Armeria builds a connection's HTTP/1 or HTTP/2 handlers once it has seen the first four
 * bytes (the HTTP/2 preface starts with {@code PRI }). This handler, first in the pipeline, lets
 * those bytes through, then joins the handlers Armeria built: after HTTP/1's codec, or around
 * HTTP/2's frame listener.
 */
public final class PathEscapes extends ChannelInboundHandlerAdapter {
  /** The path as the client sent it, when it had a malformed escape. */
  public static final String RAW_PATH = "x-sluice-raw-path";
  private static final int DETECTION_BYTES = 4;

  private int forwarded;
  private boolean joined;

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (joined || !(msg instanceof ByteBuf buf)) {
      ctx.fireChannelRead(msg);
      return;
    }
    int needed = DETECTION_BYTES - forwarded;
    if (buf.readableBytes() < needed) {
      forwarded += buf.readableBytes();
      ctx.fireChannelRead(buf);
      return;
    }
    ctx.fireChannelRead(buf.readRetainedSlice(needed));
    joined = true;
    join(ctx.pipeline());
    ctx.pipeline().remove(this);
    if (buf.isReadable()) {
      ctx.fireChannelRead(buf);
    } else {
      buf.release();
    }
  }

  private static void join(ChannelPipeline p) {
    Http2ConnectionHandler h2 = p.get(Http2ConnectionHandler.class);
    if (h2 != null) {
      h2.decoder().frameListener(new Http2Paths(h2.decoder().frameListener()));
      return;
    }
    for (var e : p) {
      // Armeria's own HTTP/1 codec (a class of its own, not Netty's): requests come out of it.
      if (e.getValue().getClass().getSimpleName().equals("HttpServerCodec")) {
        p.addAfter(p.context(e.getValue()).name(), "sluice-path-escapes", new Http1Paths());
        return;
      }
    }
  }

  /**
   * {@code path} with each {@code %} that starts no escape written {@code %25}, or null if it
   * has none. Only the path is looked at, not the query.
   */
  static String escaped(String path) {
    int q = path.indexOf('?');
    int end = q < 0 ? path.length() : q;
    StringBuilder b = null;
    for (int i = 0; i < end; i++) {
      char c = path.charAt(i);
      if (c == '%' && !(i + 2 < end && hex(path.charAt(i + 1)) && hex(path.charAt(i + 2)))) {
        if (b == null) {
          b = new StringBuilder(path.length() + 8).append(path, 0, i);
        }
        b.append("%25");
      } else if (b != null) {
        b.append(c);
      }
    }
    return b == null ? null : b.append(path, end, path.length()).toString();
  }

  private static boolean hex(char c) {
    return Character.digit(c, 16) >= 0;
  }

  private static final class Http1Paths extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof HttpRequest req) {
        req.headers().remove(RAW_PATH);
        String fixed = escaped(req.uri());
        if (fixed != null) {
          req.headers().set(RAW_PATH, req.uri());
          req.setUri(fixed);
        }
      }
      ctx.fireChannelRead(msg);
    }
  }

  private static final class Http2Paths extends Http2FrameListenerDecorator {
    Http2Paths(Http2FrameListener listener) {
      super(listener);
    }

    @Override
    public void onHeadersRead(ChannelHandlerContext ctx, int streamId, Http2Headers headers, int padding,
        boolean endOfStream) throws Http2Exception {
      super.onHeadersRead(ctx, streamId, fix(headers), padding, endOfStream);
    }

    @Override
    public void onHeadersRead(ChannelHandlerContext ctx, int streamId, Http2Headers headers, int streamDependency,
        short weight, boolean exclusive, int padding, boolean endOfStream) throws Http2Exception {
      super.onHeadersRead(ctx, streamId, fix(headers), streamDependency, weight, exclusive, padding, endOfStream);
    }

    private static Http2Headers fix(Http2Headers headers) {
      headers.remove(RAW_PATH);
      CharSequence path = headers.path();
      String fixed = path == null ? null : escaped(path.toString());
      if (fixed != null) {
        headers.add(RAW_PATH, path);
        headers.path(fixed);
      }
      return headers;
    }
  }
}
