import type { FastifyBaseLogger } from "fastify";
import pino, { type Bindings, type ChildLoggerOptions, type DestinationStream, type Logger } from "pino";
import { REDACTED, redactPaths, redactText, redactUrl } from "./redact.ts";

interface LoggedRequest {
  readonly method?: string;
  readonly url?: string;
  readonly ip?: string;
}

/**
 * The JSON log. No credential reaches it: credential members and headers are redacted by path,
 * a request is logged by method and URL (its query's credentials redacted) only, and every line is
 * scrubbed by pattern before it is written.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "fleetgate" },
      redact: { paths: [...redactPaths], censor: REDACTED },
      // fastify's own request serializer (it logs `req` on some failures) would write the URL as is.
      serializers: {
        req: (request: LoggedRequest) => ({
          method: request.method,
          url: request.url === undefined ? undefined : redactUrl(request.url),
          remoteAddress: request.ip,
        }),
      },
      hooks: { streamWrite: redactText },
    },
    destination,
  );
}

type Level = "fatal" | "error" | "warn" | "info" | "debug" | "trace";

/**
 * fastify's `childLoggerFactory`. fastify makes a child logger for every request (its `reqId`
 * binding serialized and redacted), and most requests never write a line through it: the request
 * log is written by the root logger (http/request-log.ts). This one makes the pino child only when
 * a line is written at a level that is enabled, so a request that logs nothing pays for nothing.
 */
export function lazyRequestLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  // A route's own level or serializers, or a logger that is not pino's: made at once, as fastify would.
  if (options.level !== undefined || options.serializers !== undefined || !isPino(logger))
    return logger.child(bindings, options);
  return new RequestLogger(logger, bindings) as unknown as FastifyBaseLogger;
}

function isPino(logger: FastifyBaseLogger): logger is FastifyBaseLogger & Logger {
  return typeof (logger as Partial<Logger>).isLevelEnabled === "function";
}

class RequestLogger {
  #child: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
  ) {}

  private own(): Logger {
    this.#child ??= this.parent.child(this.bindings);
    return this.#child;
  }

  private write(level: Level, args: unknown[]): void {
    const child = this.#child;
    if (child) (child[level] as (...args: unknown[]) => void).apply(child, args);
    else if (this.parent.isLevelEnabled(level)) {
      const own = this.own();
      (own[level] as (...args: unknown[]) => void).apply(own, args);
    }
  }

  get level(): string {
    return (this.#child ?? this.parent).level;
  }

  set level(level: string) {
    this.own().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.parent).isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.own().child(bindings, options);
  }

  fatal(...args: unknown[]): void {
    this.write("fatal", args);
  }
  error(...args: unknown[]): void {
    this.write("error", args);
  }
  warn(...args: unknown[]): void {
    this.write("warn", args);
  }
  info(...args: unknown[]): void {
    this.write("info", args);
  }
  debug(...args: unknown[]): void {
    this.write("debug", args);
  }
  trace(...args: unknown[]): void {
    this.write("trace", args);
  }
  silent(): void {}
}
