import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { NotFound } from "../errors.ts";
import { type Asset, type ConsoleFiles, loadConsole } from "./files.ts";

// The browser console (issue 48): static files only. It reads and changes data through the public
// GraphQL API like any other client, with the user's own credential; these routes take none.

/** The route prefix; the server resolves no caller for these routes (they serve files to anyone). */
export const CONSOLE_PREFIX = "/console/";

const YEAR = 31_536_000;

/** A Host header as it may appear in a CSP source (host and port only), else undefined. */
function safeHost(host: string | undefined): string | undefined {
  return host && /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/.test(host)
    ? host
    : undefined;
}

/**
 * No inline script or style, nothing from another host: the page's script and stylesheet come from
 * /console/assets/, and it talks to this server only (fetch, and graphql-ws on the same host).
 * Anything an attacker manages to place in the page as markup still cannot run.
 */
export function contentSecurityPolicy(host: string | undefined): string {
  const same = safeHost(host);
  const sockets = same ? ` ws://${same} wss://${same}` : "";
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "font-src 'self'",
    `connect-src 'self'${sockets}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

function secure(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return reply.headers({
    "content-security-policy": contentSecurityPolicy(request.headers.host),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
  });
}

/** The best form of an asset the client accepts: brotli, then gzip, else as it is. */
function encodingFor(request: FastifyRequest, asset: Asset): ["br" | "gzip" | undefined, Buffer] {
  const accepted = new Map<string, number>();
  for (const part of String(request.headers["accept-encoding"] ?? "").split(",")) {
    const [name = "", ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    accepted.set(name, q ? Number(q.slice(2)) : 1);
  }
  const ok = (name: string) => (accepted.get(name) ?? accepted.get("*") ?? 0) > 0;
  if (asset.br && ok("br")) return ["br", asset.br];
  if (asset.gzip && ok("gzip")) return ["gzip", asset.gzip];
  return [undefined, asset.identity];
}

/** A browser asking for a page (Accept names HTML and not JSON); API clients asking for JSON are not. */
export function wantsHtml(accept: string | undefined): boolean {
  return !!accept && /\btext\/html\b/i.test(accept) && !/\bapplication\/(?:[\w.+-]*\+)?json\b/i.test(accept);
}

export function consoleRoutes(app: FastifyInstance, files: ConsoleFiles | undefined = loadConsole()): void {
  const notBuilt = (reply: FastifyReply) =>
    reply
      .code(503)
      .type("text/plain; charset=utf-8")
      .send("The console is not built: run `npm run build:console` (npm install does it)\n");

  // `/` sends a browser to the console; an API client keeps today's answer (no route).
  app.get("/", async (request, reply) => {
    if (wantsHtml(request.headers.accept)) return reply.redirect(CONSOLE_PREFIX, 302);
    throw new NotFound("No route GET /");
  });

  // ignoreTrailingSlash (src/server.ts): `/console` is this route too.
  app.get(CONSOLE_PREFIX, async (request, reply) => {
    if (!files) return notBuilt(reply);
    return secure(request, reply)
      .header("cache-control", "no-cache")
      .type("text/html; charset=utf-8")
      .send(files.index);
  });

  app.get<{ Params: { file: string } }>(`${CONSOLE_PREFIX}assets/:file`, async (request, reply) => {
    if (!files) return notBuilt(reply);
    const asset = files.assets.get(request.params.file);
    if (!asset) throw new NotFound(`No console asset ${request.params.file}`);
    const [encoding, body] = encodingFor(request, asset);
    secure(request, reply)
      .header("cache-control", `public, max-age=${YEAR}, immutable`)
      .header("vary", "Accept-Encoding")
      .type(asset.type);
    if (encoding) reply.header("content-encoding", encoding);
    return reply.send(body);
  });
}
