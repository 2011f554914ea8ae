package dev.sluice.server.http;

/**
 * A client mistake, answered with {@code 400} (or {@code status}) and
 * {@code {"error":{"code","message"}}}.
 */
final class ApiException extends Exception {
  final int status;
  final String code;

  ApiException(int status, String code, String message) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
  }

  static ApiException badRequest(String code, String message) {
    return new ApiException(400, code, message);
  }
}
