package dev.sluice.server.envoy;

import com.linecorp.armeria.common.RequestContext;
import com.linecorp.armeria.common.grpc.GrpcExceptionHandlerFunction;
import dev.sluice.server.http.ClientMessages;
import dev.sluice.internal.log.ThrottledLog;
import io.grpc.Metadata;
import io.grpc.Status;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The status of a gRPC call that failed outside the service's own code: while its frames were
 * read or its message parsed. Such a call is the caller's mistake, answered with
 * {@code INVALID_ARGUMENT} and a plain message; the library's own status names its classes
 * ({@code INTERNAL}, "com.linecorp...Deframer: ...") or says nothing ({@code UNKNOWN}).
 */
public final class GrpcErrors implements GrpcExceptionHandlerFunction {
  private static final Logger LOG = LoggerFactory.getLogger(GrpcErrors.class);
  /** A line per kind every 10 s, however many calls fail. */
  private final ThrottledLog failures = new ThrottledLog(LOG::warn);

  @Override
  public Status apply(RequestContext ctx, Status status, Throwable cause, Metadata metadata) {
    Status.Code code = status.getCode();
    if (code != Status.Code.INTERNAL && code != Status.Code.UNKNOWN) {
      // The service's own statuses (INVALID_ARGUMENT, UNAVAILABLE...) and those of the
      // transport (CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED) are meant for the caller.
      return plain(status);
    }
    if (isMalformedRequest(cause)) {
      return Status.INVALID_ARGUMENT.withDescription(describe(cause));
    }
    String what = cause == null ? String.valueOf(status) : cause.toString();
    failures.log(cause == null ? status.getCode().name() : cause.getClass().getName(),
        () -> "gRPC call failed: " + what);
    return Status.INTERNAL.withDescription("the call failed; try again");
  }

  /**
   * Whether {@code cause} comes from reading the request: the frames (the deframer's status
   * exception, or an index out of bounds on a frame cut short), the message (protobuf's parse
   * error, wrapped in a status exception by the marshaller) or the number of messages. The
   * service's own code never throws to the library (it answers every failure itself), so a
   * failure that passed through the service (this package, which every call into the limiter
   * goes through, or the quota service's package) is a bug in it, not in the request. Other Sluice frames — the server's
   * decorators and network handlers — sit under every call and tell nothing.
   */
  private static boolean isMalformedRequest(Throwable cause) {
    for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
      for (StackTraceElement e : t.getStackTrace()) {
        String c = e.getClassName();
        if (SERVICES.stream().anyMatch(c::startsWith) && !c.startsWith(GrpcErrors.class.getName())) {
          return false;
        }
      }
    }
    return true;
  }

  /** The packages of the gRPC services: Envoy's RLS (this one) and its quota service. */
  private static final List<String> SERVICES = List.of(GrpcErrors.class.getPackageName() + ".",
      "dev.sluice.server.rlqs.");

  private static String describe(Throwable cause) {
    for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String name = t.getClass().getName();
      if (name.endsWith(".InvalidProtocolBufferException")) {
        return "the request is not a valid RateLimitRequest message";
      }
      String m = String.valueOf(t.getMessage());
      if (m.contains("compress")) {
        return "the request's message is compressed, but the call names no encoding this service reads";
      }
      if (m.contains("Frame header malformed") || m.contains("reserved bits")) {
        return "the request's gRPC frame header is malformed";
      }
      if (m.contains("exceeds maximum") || m.contains("too large")) {
        return "the request's message is too large";
      }
      if (m.contains("protobuf")) {
        return "the request is not a valid RateLimitRequest message";
      }
    }
    return "the request is not one whole gRPC message";
  }

  /** {@code status} without a description that names a library class. */
  static Status plain(Status status) {
    String d = status.getDescription();
    if (d == null || !ClientMessages.namesInternals(d)) {
      return status;
    }
    return status.withDescription(status.getCode().name().toLowerCase(java.util.Locale.ROOT).replace('_', ' '));
  }
}
