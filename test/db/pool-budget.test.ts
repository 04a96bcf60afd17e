import { createServer, type Socket } from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/auth/api-keys.ts";
import { loadConfig } from "../../src/config.ts";
import { clientErrorOf } from "../../src/core/client-errors.ts";
import { channels } from "../../src/db/channels.ts";
import type { Database } from "../../src/db/database.ts";
import { openPostgres, type PostgresOptions } from "../../src/db/postgres.ts";
import { newUnitOfWork, withUnitOfWork } from "../../src/db/unit-of-work.ts";
import { createLogger } from "../../src/logger.ts";
import { buildModel } from "../../src/model/registry.ts";
import { buildServer } from "../../src/server.ts";
import { buildFixture, type Fixture } from "../support/core/read-fixture.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";
import { graphql } from "../support/graphql/graphql.ts";
import { type Subscription, subscribe } from "../support/graphql/graphql-subscriptions.ts";
import type { TestServer } from "../support/server.ts";

// Issue 27, item 8: no request or stream holds more than its share of the pool. A request's
// statements take one connection at a time, subscriptions' reads share DATABASE_STREAM_CONNECTIONS,
// and a wait for a connection that runs out says the server is busy, not that the database is away.

const ADMIN = 1_000_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const aliases = (n: number, field: string) =>
  `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(" ")} }`;

interface PoolServer extends TestServer {
  readonly db: Database;
  readonly fx: Fixture;
}

/** The real server on a pool of its own (`options`), over a fresh database holding the read fixture. */
async function serveOn(options: Omit<PostgresOptions, "url">): Promise<PoolServer> {
  const test: TestDatabase = await freshDatabase("postgres");
  const fx = await buildFixture(test.db);
  const db = openPostgres({ url: test.url as string, ...options });
  await db.query({ text: `INSERT INTO "actor" ("id") VALUES ($1::int4)`, values: [ADMIN] });
  await db.query({
    text: `INSERT INTO "user" ("id", "actor", "username", "email", "password", "jwt_secret", "is_admin")
           VALUES ($1::int4, $1::int4, 'pool-admin', 'pool-admin@localhost', 'not-a-hash', 'test', true)`,
    values: [ADMIN],
  });
  const adminKey = await createApiKey(db, { actor: ADMIN, name: "tests" });
  const config = loadConfig({ LOG_LEVEL: "silent", COMMAND_JOBS: "false" });
  const app = await buildServer({ db, model: buildModel(), config, logger: createLogger("silent") });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  const authorization = `Bearer ${adminKey}`;
  return {
    app: { inject: (request) => app.inject({ ...request, headers: { authorization, ...request.headers } }) },
    test,
    url,
    adminKey,
    db,
    fx,
    async close() {
      await app.close();
      await db.close();
      await test.drop();
    },
  };
}

/**
 * Watches the pool at every turn of the event loop; `stop` gives the most connections it had out
 * at once (serving someone, or being opened for someone).
 */
function watchPool(db: Database): () => number {
  let most = 0;
  let watching = true;
  const look = () => {
    const stats = db.poolStats?.();
    if (stats) most = Math.max(most, stats.total - stats.idle);
    if (watching) setImmediate(look);
  };
  look();
  return () => {
    watching = false;
    return most;
  };
}

describe.runIf(databaseKinds.includes("postgres"))("a request's share of the pool on PostgreSQL", () => {
  describe("one request, one connection at a time", () => {
    let server: PoolServer;
    beforeAll(async () => {
      server = await serveOn({ poolSize: 8 });
    }, 60_000);
    afterAll(() => server?.close());

    it("a GraphQL request's 40 root fields run on one connection", async () => {
      const stop = watchPool(server.db);
      const reply = await graphql(
        server,
        aliases(40, "devices(first: 1000) { id deviceName belongsToApplication { appName } }"),
      );
      const most = stop();
      expect(reply.errors).toBeUndefined();
      expect(reply.statements).toBe(1);
      expect(most).toBe(1);
      // The same reads as 40 requests at once take several: the watch does see them.
      const apart = watchPool(server.db);
      await Promise.all(Array.from({ length: 40 }, () => graphql(server, "{ devices(first: 1000) { id } }")));
      expect(apart()).toBeGreaterThan(1);
    });

    it("a statement sent on the database inside the request's own transaction takes a connection of its own, not forever", async () => {
      const unit = newUnitOfWork();
      const answer = await withUnitOfWork(unit, () =>
        server.db.transaction(async (tx) => {
          await tx.query({ text: "SELECT 1", values: [] });
          // Not on `tx`: it cannot wait for the connection the transaction holds until it ends.
          const [row] = await server.db.query<{ n: number }>({ text: "SELECT 2 AS n", values: [] });
          return row?.n;
        }),
      );
      expect(answer).toBe(2);
      expect(unit.connection.held).toBe(0);
    });
  });

  describe("300 aliases beside other reads, on a pool of 4", () => {
    let server: PoolServer;
    beforeAll(async () => {
      server = await serveOn({ poolSize: 4, connectTimeoutMs: 1_500 });
    }, 60_000);
    afterAll(() => server?.close());

    it("the aliases wait in the database on one connection, and reads beside them keep the others", async () => {
      const fleets = { method: "GET" as const, url: "/v6/application?$top=5&$select=id" };
      expect((await server.app.inject(fleets)).statusCode).toBe(200);
      // The devices are locked while the aliases start: their statement waits in the database,
      // holding its connection, for longer than anyone waits for a connection.
      const locker = new pg.Client({ connectionString: server.test.url });
      await locker.connect();
      await locker.query(`BEGIN; LOCK TABLE "device" IN ACCESS EXCLUSIVE MODE`);
      const big = graphql(server, aliases(300, "devices(first: 1000) { id deviceName }"));
      const statuses: number[] = [];
      // Longer than the connection wait, so that aliases holding every connection would show as
      // 503s, and shorter than the statement time-out (5 s) the aliases wait under.
      const until = Date.now() + 3_000;
      const beside = async () => {
        while (Date.now() < until) {
          const [odata, query] = await Promise.all([
            server.app.inject(fleets),
            graphql(server, "{ applications(first: 5) { id appName } }"),
          ]);
          statuses.push(odata.statusCode, query.status);
        }
      };
      try {
        await Promise.all([beside(), beside(), beside()]);
      } finally {
        await locker.query("COMMIT");
        await locker.end();
      }
      const reply = await big;
      expect(reply.errors).toBeUndefined();
      expect(reply.statements).toBe(1);
      expect(reply.data?.a299).toHaveLength(40);
      expect(statuses.length).toBeGreaterThan(0);
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
    });
  });

  describe("a wait for a connection that runs out", () => {
    let server: PoolServer;
    beforeAll(async () => {
      server = await serveOn({ poolSize: 1, connectTimeoutMs: 300 });
    }, 60_000);
    afterAll(() => server?.close());

    /** Holds the pool's one connection (a transaction outside any request) until the function it gives is called. */
    async function holdTheConnection(): Promise<() => Promise<void>> {
      let release = () => {};
      const held = server.db.transaction(() => new Promise<void>((resolve) => (release = resolve)));
      while ((server.db.poolStats?.().idle ?? 0) > 0 || server.db.poolStats?.().total === 0) await sleep(5);
      return async () => {
        release();
        await held;
      };
    }

    it("is a 503 that says the server is busy, with Retry-After, on OData and GraphQL alike", async () => {
      // The caller's credential is looked up (and cached) while a connection is free.
      expect((await server.app.inject({ method: "GET", url: "/v6/device?$top=1" })).statusCode).toBe(200);
      expect((await graphql(server, "{ devices(first: 1) { id } }")).errors).toBeUndefined();
      const release = await holdTheConnection();
      try {
        const odata = await server.app.inject({ method: "GET", url: "/v6/device?$top=1" });
        expect(odata.statusCode).toBe(503);
        expect(odata.headers["retry-after"]).toBe("1");
        expect(JSON.parse(odata.body)).toBe("The server is busy; try again shortly");

        const response = await server.app.inject({
          method: "POST",
          url: "/graphql",
          headers: { "content-type": "application/json" },
          payload: JSON.stringify({ query: "{ devices(first: 1) { id } }" }),
        });
        expect(response.statusCode).toBe(503);
        expect(response.headers["retry-after"]).toBe("1");
        const body = JSON.parse(response.body) as {
          errors: { message: string; extensions: { code: string } }[];
        };
        expect(body.errors[0]?.message).toBe("The server is busy; try again shortly");
        expect(body.errors[0]?.extensions.code).toBe("SERVICE_UNAVAILABLE");
      } finally {
        await release();
      }
      expect((await server.app.inject({ method: "GET", url: "/v6/device?$top=1" })).statusCode).toBe(200);
    });

    it("is still 'the database is unavailable' when the database does not answer", async () => {
      // A server that takes connections and never says a word: connections being opened time out,
      // and so does a wait for one of them, while nothing is busy.
      const sockets = new Set<Socket>();
      const silent = createServer((socket) => {
        sockets.add(socket);
        socket.on("error", () => {});
      });
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
      const { port } = silent.address() as { port: number };
      const db = openPostgres({
        url: `postgres://nobody@127.0.0.1:${port}/none`,
        poolSize: 1,
        connectTimeoutMs: 200,
      });
      try {
        const outcomes = await Promise.allSettled(
          [1, 2].map(() => db.query({ text: "SELECT 1", values: [] })),
        );
        for (const outcome of outcomes) {
          expect(outcome.status).toBe("rejected");
          const known = clientErrorOf((outcome as PromiseRejectedResult).reason);
          expect(known?.message).toBe("The database is unavailable; try again shortly");
        }
      } finally {
        await db.close();
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => silent.close(resolve));
      }
    });
  });

  describe("subscriptions' reads", () => {
    const SUBSCRIBERS = 12;

    /** The most connections the pool had out while every subscriber read a burst of changes. */
    async function connectionsForABurst(server: PoolServer): Promise<number> {
      const streams: Subscription<unknown>[] = [];
      const admin = new pg.Client({ connectionString: server.test.url });
      await admin.connect();
      try {
        for (let i = 0; i < SUBSCRIBERS; i++)
          streams.push(
            await subscribe(server.url, server.adminKey, "subscription { deviceChanged { id status } }"),
          );
        const stop = watchPool(server.db);
        // Changed and announced from outside the pool, as another instance's writes would be, until
        // every subscriber has read a change (the first may come before the LISTEN is in place).
        const devices = server.fx.devices.slice(0, 10);
        for (let round = 0; round < 50 && streams.some((stream) => stream.results.length === 0); round++) {
          await admin.query(`UPDATE "device" SET "status" = $1 WHERE "id" = ANY($2::int4[])`, [
            `burst ${round}`,
            devices.map((device) => device.id),
          ]);
          for (const device of devices)
            await admin.query("SELECT pg_notify($1, $2)", [
              channels.device,
              `${device.id}:${device.belongs_to__application}`,
            ]);
          await sleep(100);
        }
        const most = stop();
        for (const stream of streams) expect(stream.results.length).toBeGreaterThan(0);
        return most;
      } finally {
        for (const stream of streams) stream.close();
        await admin.end();
      }
    }

    it("take at most DATABASE_STREAM_CONNECTIONS connections of the pool, however many subscribers read", async () => {
      const server = await serveOn({ poolSize: 8, streamConnections: 2 });
      try {
        const most = await connectionsForABurst(server);
        expect(most).toBeGreaterThan(0);
        expect(most).toBeLessThanOrEqual(2);
      } finally {
        await server.close();
      }
    }, 60_000);

    it("(the same burst with a budget of the whole pool takes more: the watch sees them)", async () => {
      const server = await serveOn({ poolSize: 8, streamConnections: 8 });
      try {
        expect(await connectionsForABurst(server)).toBeGreaterThan(2);
      } finally {
        await server.close();
      }
    }, 60_000);
  });
});
