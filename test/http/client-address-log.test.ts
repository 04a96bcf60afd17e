import fc from "fast-check";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/auth/api-keys.ts";
import { loadConfig } from "../../src/config.ts";
import { NOT_AN_ADDRESS } from "../../src/http/request-log.ts";
import { createLogger } from "../../src/logger.ts";
import { buildModel } from "../../src/model/registry.ts";
import { buildServer } from "../../src/server.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// Issue 45, item 4: each request's log line carries the client's address (`ip`), as README
// "Behind a load balancer" says: the connection's own, or X-Forwarded-For's as TRUST_PROXY trusts
// it; and no credential reaches the log, whatever a client writes in the header. A real server on
// 127.0.0.1, real requests, the pino lines it writes.

const ACTOR = 2_000_000;

/**
 * Whether `address` is a loopback address (127.0.0.0/8, ::1, or 127/8 mapped into IPv6), by the
 * URL parser's own normal form: TRUST_PROXY=loopback trusts such an address as a balancer, so it is
 * never the client.
 */
function isLoopback(address: string): boolean {
  if (!address.includes(":")) return address.startsWith("127.");
  const normal = new URL(`http://[${address}]/`).hostname;
  return normal === "[::1]" || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(normal);
}

interface Line {
  readonly msg?: string;
  readonly reqId?: string;
  readonly ip?: string;
  readonly status?: number;
}

describe.each(databaseKinds)("the client's address in the request log on %s", (kind) => {
  let test: TestDatabase;
  let key: string;
  let sequence = 0;

  beforeAll(async () => {
    test = await freshDatabase(kind);
    await test.db.query({ text: `INSERT INTO "actor" ("id") VALUES ($1::int4)`, values: [ACTOR] });
    await test.db.query({
      text: `INSERT INTO "user" ("id", "actor", "username", "email", "password", "jwt_secret", "is_admin")
             VALUES ($1::int4, $1::int4, 'log-admin', 'log@localhost', 'x', 'x', true)`,
      values: [ACTOR],
    });
    key = await createApiKey(test.db, { actor: ACTOR, name: "log" });
  }, 120_000);
  afterAll(() => test?.drop());

  /** A real server with TRUST_PROXY as given, on a loopback port, and the lines it logs. */
  async function serverWith(trustProxy: string | undefined) {
    const lines: string[] = [];
    const logger = createLogger("info", { write: (line: string) => void lines.push(line) });
    const config = loadConfig(trustProxy === undefined ? {} : { TRUST_PROXY: trustProxy });
    const app: FastifyInstance = await buildServer({ db: test.db, model: buildModel(), config, logger });
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    /** Sends a request and answers its log line. */
    const send = async (path: string, headers: Record<string, string> = {}): Promise<Line> => {
      const id = `addr-${++sequence}`;
      const answer = await fetch(`${url}${path}`, { headers: { "x-request-id": id, ...headers } });
      await answer.arrayBuffer();
      // The line is written once the answer was sent: wait for it.
      for (let tries = 0; tries < 100; tries++) {
        const line = lines.map((text) => JSON.parse(text) as Line).find((each) => each.reqId === id);
        if (line?.msg === "request") return line;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`no request line for ${id}`);
    };
    return { send, lines, close: () => app.close() };
  }

  it("is the connection's address without TRUST_PROXY, whatever X-Forwarded-For says", async () => {
    const server = await serverWith(undefined);
    try {
      expect(await server.send("/ping")).toMatchObject({ ip: "127.0.0.1", status: 200 });
      expect(await server.send("/ping", { "x-forwarded-for": "203.0.113.9" })).toMatchObject({
        ip: "127.0.0.1",
      });
      // An error's line too.
      expect(await server.send("/no/such/route", { "x-forwarded-for": "203.0.113.9" })).toMatchObject({
        ip: "127.0.0.1",
        status: 404,
      });
    } finally {
      await server.close();
    }
  });

  it("is X-Forwarded-For's client behind a trusted balancer (TRUST_PROXY=loopback), any address", async () => {
    const server = await serverWith("loopback");
    try {
      expect(await server.send("/ping")).toMatchObject({ ip: "127.0.0.1" });
      await fc.assert(
        fc.asyncProperty(fc.oneof(fc.ipV4(), fc.ipV6()), fc.ipV4(), async (seen, spoofed) => {
          // The client's own header names `spoofed`; the balancer appends the address it saw. A
          // loopback address there is one more trusted balancer, so the client is the one before it.
          const line = await server.send("/ping", { "x-forwarded-for": `${spoofed}, ${seen}` });
          expect(line.ip).toBe(isLoopback(seen) ? spoofed : seen);
        }),
        {
          numRuns: 25,
          examples: [
            ["127.0.0.0", "0.0.0.0"],
            ["::1", "198.51.100.4"],
          ],
        },
      );
    } finally {
      await server.close();
    }
  });

  it("counts proxies from the right with a number (TRUST_PROXY=2), the first address with true", async () => {
    const counted = await serverWith("2");
    try {
      const line = await counted.send("/ping", { "x-forwarded-for": "198.51.100.1, 203.0.113.5, 10.0.0.2" });
      expect(line.ip).toBe("203.0.113.5");
    } finally {
      await counted.close();
    }
    const any = await serverWith("true");
    try {
      const line = await any.send("/ping", { "x-forwarded-for": "198.51.100.1, 203.0.113.5, 10.0.0.2" });
      expect(line.ip).toBe("198.51.100.1");
    } finally {
      await any.close();
    }
  });

  it("never writes a credential: not the request's, nor what a client wrote as its address", async () => {
    const server = await serverWith("true");
    try {
      const bearer = await server.send("/v6/application?$top=1", {
        authorization: `Bearer ${key}`,
        "x-forwarded-for": "198.51.100.7",
      });
      expect(bearer).toMatchObject({ ip: "198.51.100.7", status: 200 });
      const query = await server.send(`/v6/application?$top=1&apikey=${key}`, {
        "x-forwarded-for": "198.51.100.8",
      });
      expect(query).toMatchObject({ ip: "198.51.100.8", status: 200 });
      // With TRUST_PROXY=true the first X-Forwarded-For entry is taken as it is written.
      const forged = await server.send("/ping", { "x-forwarded-for": key });
      expect(forged.ip).toBe(NOT_AN_ADDRESS);
      await fc.assert(
        fc.asyncProperty(
          fc.stringMatching(/^[A-Za-z0-9._~:/+=-]{12,40}$/).filter((text) => !/^[\d.:a-f]+$/i.test(text)),
          async (text) => {
            const line = await server.send("/ping", { "x-forwarded-for": `${text}, 10.0.0.1` });
            expect(line.ip).toBe(NOT_AN_ADDRESS);
          },
        ),
        { numRuns: 20 },
      );
      expect(server.lines.join("\n")).not.toContain(key);
    } finally {
      await server.close();
    }
  });
});
