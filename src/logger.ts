import pino, { type DestinationStream, type Logger } from "pino";
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
