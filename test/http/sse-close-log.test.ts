import { request } from "node:http";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { buildModel } from "../../src/model/registry.ts";
import { buildServer } from "../../src/server.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// Issue 31: the README's promise, "a request whose client went away is logged with status 499",
// for the request that lasts longest: a subscription's SSE stream its client closes.

interface Line {
  readonly msg?: string;
  readonly reqId?: string;
  readonly url?: string;
  readonly status?: number;
  readonly ms?: number;
}

describe.each(databaseKinds)("an SSE stream its client closes, on %s", (kind) => {
  let test: TestDatabase;
  let app: FastifyInstance;
  let url: string;
  const lines: Line[] = [];

  beforeAll(async () => {
    test = await freshDatabase(kind);
    const logger = createLogger("info", {
      write: (line: string) => {
        lines.push(JSON.parse(line) as Line);
      },
    });
    app = await buildServer({ db: test.db, model: buildModel(), config: loadConfig({}), logger });
    url = await app.listen({ host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => {
    await app.close();
    await test.drop();
  });

  it("is logged once, with status 499, its request id and how long it lasted", async () => {
    const requestId = `sse-closed-${kind}`;
    await new Promise<void>((resolve, reject) => {
      const sent = request(
        `${url}/graphql`,
        {
          method: "POST",
          headers: {
            accept: "text/event-stream",
            "content-type": "application/json",
            "x-request-id": requestId,
          },
        },
        (response) => {
          expect(response.statusCode).toBe(200);
          expect(response.headers["content-type"]).toMatch(/^text\/event-stream/);
          // The stream is open: the client goes away.
          setTimeout(() => {
            sent.destroy();
            resolve();
          }, 300);
        },
      );
      sent.on("error", (error: NodeJS.ErrnoException) => {
        if (error.code !== "ECONNRESET") reject(error);
      });
      sent.end(JSON.stringify({ query: "subscription { fleetChanged { id appName } }" }));
    });
    await expect
      .poll(() => lines.filter((line) => line.msg === "request" && line.reqId === requestId), {
        timeout: 10_000,
      })
      .toHaveLength(1);
    // Nothing more is written for it afterwards.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const logged = lines.filter((line) => line.msg === "request" && line.reqId === requestId);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ url: "/graphql", status: 499 });
    expect(logged[0]?.ms).toBeGreaterThanOrEqual(250);
  });
});
