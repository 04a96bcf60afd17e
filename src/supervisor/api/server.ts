import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { UpdatesLockedError } from "../lock.ts";
import { hasFeature, type Version } from "../versions.ts";
import { failed, type Reply, text } from "./reply.ts";
import { matchRoute, type Route } from "./route.ts";

// The device API's HTTP front, in the real supervisor's order: parse the body, answer
// the open routes, check the key, route, and map errors (423 for the update lock, 503
// for anything else, malformed JSON included).

const BODY_LIMIT = 10 * 1024 * 1024;

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
}

class BodyError extends Error {}

async function readBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw new BodyError("request entity too large");
    chunks.push(chunk as Buffer);
  }
  const raw = Buffer.concat(chunks).toString("utf8");
  const type = request.headers["content-type"] ?? "";
  // As express.json() and express.urlencoded(): other bodies are ignored.
  if (/\bjson\b/i.test(type)) {
    if (raw.trim() === "") return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (error) {
      throw new BodyError((error as Error).message);
    }
    // express.json is strict: only objects and arrays; an array carries no members we read.
    if (typeof parsed !== "object" || parsed === null) throw new BodyError(`Unexpected JSON value: ${raw}`);
    return Array.isArray(parsed) ? {} : (parsed as Record<string, unknown>);
  }
  if (/application\/x-www-form-urlencoded/i.test(type)) return Object.fromEntries(new URLSearchParams(raw));
  return {};
}

function presentedKey(request: IncomingMessage, url: URL): string | undefined {
  const fromQuery = url.searchParams.get("apikey");
  if (fromQuery) return fromQuery;
  return /^(?:Bearer|ApiKey) (\w+)$/.exec(request.headers.authorization ?? "")?.[1];
}

function sameKey(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function send(response: ServerResponse, reply: Reply): void {
  if (reply.body === undefined) {
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
    let body: Record<string, unknown>;
    try {
      body = await readBody(request);
    } catch (error) {
      if (error instanceof BodyError) return failed(503, error.message);
      throw error;
    }
    let match = matchRoute(open, method, url.pathname);
    if (!match) {
      if (!sameKey(presentedKey(request, url), options.apiKey())) return text(401, "Unauthorized");
      match = matchRoute(routes, method, url.pathname);
    }
    if (!match) return text(404, `Cannot ${method} ${url.pathname}`);
    try {
      return await match.route.handle({ method, path: url.pathname, params: match.params, body });
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
    faulty(request)
      .then((reply) => send(response, reply))
      .catch((error) => {
        options.log(`request failed: ${(error as Error).stack ?? error}`);
        if (!response.headersSent) send(response, failed(503, "Internal error"));
      });
  });
}
