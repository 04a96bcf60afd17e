// Every error a client can cause is one of these; the surfaces translate them
// to HTTP (src/http/errors.ts) and GraphQL in one place each.
export class FleetgateError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequest extends FleetgateError {
  constructor(message: string) {
    super(message, 400, "BAD_USER_INPUT");
  }
}

export class Unauthorized extends FleetgateError {
  constructor(message = "Unauthorized") {
    super(message, 401, "UNAUTHENTICATED");
  }
}

export class Forbidden extends FleetgateError {
  constructor(message = "Forbidden") {
    super(message, 403, "FORBIDDEN");
  }
}

export class NotFound extends FleetgateError {
  constructor(message = "Not found") {
    super(message, 404, "NOT_FOUND");
  }
}

export class Conflict extends FleetgateError {
  constructor(message: string) {
    super(message, 409, "CONFLICT");
  }
}

/** RFC 9110's 412: an If-Match that the entity's ETag no longer matches (it changed since it was read). */
export class PreconditionFailed extends FleetgateError {
  constructor(message: string) {
    super(message, 412, "PRECONDITION_FAILED");
  }
}

/** RFC 9110's 422: a well-formed request that cannot be processed, such as a reused Idempotency-Key. */
export class UnprocessableContent extends FleetgateError {
  constructor(message: string) {
    super(message, 422, "UNPROCESSABLE_CONTENT");
  }
}

export class TooManyRequests extends FleetgateError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message, 429, "TOO_MANY_REQUESTS");
  }
}

/** The database cannot be reached (a restart, a failover), or every connection stayed busy: retry shortly. */
export class ServiceUnavailable extends FleetgateError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message, 503, "SERVICE_UNAVAILABLE");
  }
}

/** A statement ran longer than its time-out and was stopped. */
export class GatewayTimeout extends FleetgateError {
  constructor(message: string) {
    super(message, 504, "GATEWAY_TIMEOUT");
  }
}

/** Every error class a client can meet; the README's error table lists each of them. */
export const errorClasses = [
  BadRequest,
  Unauthorized,
  Forbidden,
  NotFound,
  Conflict,
  PreconditionFailed,
  UnprocessableContent,
  TooManyRequests,
  ServiceUnavailable,
  GatewayTimeout,
] as const;
