import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { UpdatesLockedError } from "../lock.ts";
import { hasFeature, type Version } from "../versions.ts";
import { BodyError, parseBody, readRawBody } from "./body.ts";
import { failed, type Reply, text } from "./reply.ts";
import { matchRoute, type Route } from "./route.ts";

// The device API's HTTP front, in the real supervisor's order: answer the open routes,
// check the key (before the body is parsed: a malformed body without a key is a 401), route,
// parse the body for the routes that read one, and map errors (423 for the update lock, 503
// for anything else, malformed JSON included). Routing is express' default: HEAD as GET,
// paths case-insensitive, a trailing slash allowed.

/** Injected misbehaviour, for the fleet simulator: answer late, or fail a share of requests. */
export interface Faults {
  readonly delayMs: number;
  /** 0 to 1: the share of requests answered 503 instead. */
  readonly errorRate: number;
}

export interface ApiServerOptions {
  readonly faults?: Faults;
  readonly routes: readonly Route[];
  /** Routes the version lacks do not exist: 404 like any unknown path. */
  readonly version: Version;
  readonly apiKey: () => string;
  readonly log: (message: string) => void;
  /** Each answered request, as the real supervisor's api log line: `[api] GET /v1/device 200 - 3 ms`. */
  readonly onAnswer?: (line: string) => void;
}

function presentedKey(request: IncomingMessage, url: URL): string | undefined {
  const fromQuery = url.searchParams.get("apikey");
  if (fromQuery) return fromQuery;
  // The real auth middleware matches the scheme case-insensitively (`bearer`, `APIKEY`).
  return /^(?:Bearer|ApiKey) (\w+)$/i.exec(request.headers.authorization ?? "")?.[1];
}

function sameKey(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function send(response: ServerResponse, reply: Reply): void {
  if (reply.stream) {
    response.writeHead(reply.status, { "content-type": "text/plain; charset=utf-8" });
    reply.stream({
      write: (chunk) => response.write(chunk),
      end: () => response.end(),
      onClose: (listener) => response.once("close", listener),
    });
  } else if (reply.body === undefined) {
    response.writeHead(reply.status).end();
  } else if (typeof reply.body === "string") {
    response.writeHead(reply.status, { "content-type": "text/plain; charset=utf-8" }).end(reply.body);
  } else {
    response.writeHead(reply.status, { "content-type": "application/json; charset=utf-8" });
    response.end(JSON.stringify(reply.body));
  }
}

export function createApiServer(options: ApiServerOptions): Server {
  const routes = options.routes.filter((route) => hasFeature(options.version, route.feature));
  const open = routes.filter((route) => route.open);

  async function answer(request: IncomingMessage): Promise<Reply> {
    const url = new URL(request.url ?? "/", "http://device");
    const method = request.method ?? "GET";
    // express routes HEAD to the GET handler; node leaves the body out of a HEAD answer.
    const routed = method === "HEAD" ? "GET" : method;
    const raw = await readRawBody(request);
    let match = matchRoute(open, routed, url.pathname);
    if (!match) {
      if (!sameKey(presentedKey(request, url), options.apiKey())) return text(401, "Unauthorized");
      match = matchRoute(routes, routed, url.pathname);
    }
    if (!match) return text(404, `Cannot ${method} ${url.pathname}`);
    let body: Record<string, unknown> = {};
    if (match.route.readsBody !== false) {
      try {
        body = parseBody(raw, request.headers["content-type"] ?? "");
      } catch (error) {
        if (error instanceof BodyError) return failed(503, error.message);
        throw error;
      }
    }
    try {
      return await match.route.handle({
        method: routed,
        path: url.pathname,
        query: url.searchParams,
        params: match.params,
        body,
      });
    } catch (error) {
      if (error instanceof UpdatesLockedError) return failed(423, error.message);
      options.log(`${method} ${url.pathname} failed: ${(error as Error).stack ?? error}`);
      return failed(503, (error as Error).message);
    }
  }

  const faults = options.faults;
  const faulty = async (request: IncomingMessage): Promise<Reply> => {
    if (faults && faults.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, faults.delayMs));
    if (faults && Math.random() < faults.errorRate) return failed(503, "Injected fault");
    return answer(request);
  };

  return createServer((request, response) => {
    const started = Date.now();
    faulty(request)
      .then((reply) => {
        send(response, reply);
        const path = new URL(request.url ?? "/", "http://device").pathname;
        options.onAnswer?.(
          `[api]     ${request.method} ${path} ${reply.status} - ${Date.now() - started} ms`,
        );
      })
      .catch((error) => {
        options.log(`request failed: ${(error as Error).stack ?? error}`);
        if (!response.headersSent) send(response, failed(503, "Internal error"));
      });
  });
}
