import type { DestinationStream } from "pino";
import pretty from "pino-pretty";

interface RequestLine {
  readonly reqId?: string;
  readonly method?: string;
  readonly url?: string;
  readonly status?: number;
  readonly ms?: number;
  readonly statements?: number;
}

/**
 * The log for a person at a terminal: one readable line per event (time, level, message, the
 * rest as fields) instead of JSON; a request reads `GET /v6/device 200 3.1 ms 1 SQL [<id>]`, its
 * id the `x-request-id` a client or a 500's body quotes, and any other line of a request ends with
 * the same `[<id>]`. Written synchronously, so lines and the start-up banner appear in the order
 * they happen.
 */
export function prettyDestination(): DestinationStream {
  return pretty({
    sync: true,
    colorize: true,
    singleLine: true,
    translateTime: "SYS:HH:MM:ss",
    ignore: "pid,hostname,service,reqId,method,url,status,ms,statements",
    messageFormat: (log, messageKey) => {
      const line = log as RequestLine;
      const id = line.reqId === undefined ? "" : ` [${line.reqId}]`;
      if (log[messageKey] !== "request" || line.method === undefined)
        return `${String(log[messageKey] ?? "")}${id}`;
      return `${line.method} ${line.url} ${line.status} ${line.ms} ms ${line.statements} SQL${id}`;
    },
  });
}
