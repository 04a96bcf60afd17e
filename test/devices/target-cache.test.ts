import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";
import { type Instance, startInstance } from "../support/devices/target-instances.ts";
import { type Answer, answerOf, type Endpoint, freshAnswer } from "../support/devices/target-oracle.ts";
import { testAdminKey } from "../support/server.ts";

// The target-state cache (src/devices/target-cache.ts): a poll whose If-None-Match names the
// current ETag is a 304 with no statement at all, and the cache never answers what the database
// would refuse: a device moved, deleted, or whose key was revoked or expired gets what a fresh read
// gives (401, or the new fleet's target), once the change's announcement arrived (within 1 s).

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const STALE_FOR_AT_MOST_MS = 1_000;

describe.each(databaseKinds)("the target-state cache on %s", (kind) => {
  let test: TestDatabase;
  let server: Instance;
  let admin: string;
  const provisioning = new Map<number, string>();

  beforeAll(async () => {
    test = await freshDatabase(kind);
    await seedDemo(test.db);
    admin = `Bearer ${await testAdminKey(test)}`;
    server = await startInstance(test);
    for (const fleet of [1, 2]) {
      const response = await server.inject({
        method: "POST",
        url: `/api-key/application/${fleet}/provisioning`,
        headers: { authorization: admin },
      });
      provisioning.set(fleet, JSON.parse(response.body));
    }
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await test?.drop();
  });

  const sql = (text: string, values: unknown[] = []) => test.db.query({ text, values });

  async function register(fleet = 1) {
    const uuid = hex(16);
    const response = await server.inject({
      method: "POST",
      url: "/device/register",
      headers: { authorization: `Bearer ${provisioning.get(fleet)}` },
      payload: { application: fleet, uuid },
    });
    expect(response.statusCode, response.body).toBe(201);
    const { id, api_key: key } = JSON.parse(response.body) as { id: number; api_key: string };
    return { id, uuid, key };
  }
  type Device = Awaited<ReturnType<typeof register>>;

  const poll = (device: Device, endpoint: Endpoint, ifNoneMatch?: string) =>
    server.inject({
      method: "GET",
      url: `/device/${endpoint}/${device.uuid}/state`,
      headers: {
        authorization: `Bearer ${device.key}`,
        ...(ifNoneMatch !== undefined && { "if-none-match": ifNoneMatch }),
      },
    });

  /** Polls until the answer is a fresh read's; a stale one is allowed for a second at most. */
  async function converges(device: Device, endpoint: Endpoint, ifNoneMatch: string): Promise<Answer> {
    const since = Date.now();
    for (;;) {
      const answer = answerOf(await poll(device, endpoint, ifNoneMatch));
      const fresh = await freshAnswer(test.db, { ...device, endpoint, ifNoneMatch });
      if (JSON.stringify(answer) === JSON.stringify(fresh)) return answer;
      expect(
        Date.now() - since,
        `still ${JSON.stringify(answer)}, fresh ${JSON.stringify(fresh)}`,
      ).toBeLessThan(STALE_FOR_AT_MOST_MS);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** A device whose target the cache knows: its ETag answers 304 with no statement. */
  async function cached(endpoint: Endpoint, fleet = 1) {
    const device = await register(fleet);
    const first = await poll(device, endpoint);
    expect(first.statusCode, first.body).toBe(200);
    const etag = first.headers.etag as string;
    const again = await poll(device, endpoint, etag);
    expect(again.statusCode).toBe(304);
    expect(again.statements).toBe(0);
    return { device, etag };
  }

  describe.each(["v2", "v3"] as const)("%s", (endpoint) => {
    it("answers a poll whose If-None-Match is current with 304 and no SQL statement", async () => {
      const device = await register();
      const first = await poll(device, endpoint);
      expect(first.statusCode).toBe(200);
      expect(first.statements).toBeGreaterThan(0);
      const etag = first.headers.etag as string;
      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`]) {
        const again = await poll(device, endpoint, ifNoneMatch);
        expect(again.statusCode).toBe(304);
        expect(again.headers.etag).toBe(etag);
        expect(again.headers["x-sql-statements"]).toBe("0");
        expect(again.statements, "statements sent for the poll, its credential's included").toBe(0);
      }
      // An old ETag needs the body: it is read.
      const stale = await poll(device, endpoint, '"old"');
      expect(stale.statusCode).toBe(200);
      expect(stale.body).toBe(first.body);
      expect(stale.statements).toBeGreaterThan(0);
    });

    it("reads a fleet's and a pin's shared part once per change, and each device's own part per poll", async () => {
      const [a, b, c, d] = [await register(), await register(), await register(), await register()];
      const fresh = (device: Device) => freshAnswer(test.db, { ...device, endpoint, ifNoneMatch: undefined });
      /** Polls (without an ETag) until the answer is fresh; the statements of the poll that was. */
      async function read(device: Device): Promise<string> {
        const since = Date.now();
        for (;;) {
          const response = await poll(device, endpoint);
          if (JSON.stringify(answerOf(response)) === JSON.stringify(await fresh(device)))
            return response.headers["x-sql-statements"] as string;
          expect(Date.now() - since).toBeLessThan(STALE_FOR_AT_MOST_MS);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
      // A change to the fleet: the first read after its announcement reads the fleet's part again.
      await sql(
        `INSERT INTO "application_environment_variable" ("application", "name", "value") VALUES (1, $1, 'x')`,
        [`P${hex(3)}`],
      );
      expect(await read(a), "the device's own part and its fleet's").toBe("2");
      expect(await read(b), "the device's own part").toBe("1");
      expect(await read(a)).toBe("1");
      // Two devices pinned to one release: the first reads the release's part, the second has it.
      const [release] = await test.db.query<{ id: number }>({
        text: `SELECT "id" FROM "release" WHERE "belongs_to__application" = 1 AND "id" IS DISTINCT FROM
                 (SELECT "should_be_running__release" FROM "application" WHERE "id" = 1) ORDER BY "id" LIMIT 1`,
        values: [],
      });
      // Changed, so that no part of it is held from before.
      await sql(`UPDATE "release" SET "composition" = $2::jsonb WHERE "id" = $1`, [
        release?.id,
        JSON.stringify({ services: { [`s${hex(2)}`]: { image: "alpine" } } }),
      ]);
      await sql(`UPDATE "device" SET "should_be_running__release" = $2 WHERE "id" = ANY($1)`, [
        [c.id, d.id],
        release?.id,
      ]);
      expect(await read(c), "the device's own part and its pin's").toBe("2");
      expect(await read(d)).toBe("1");
      // A device's own change reads only its own part.
      await sql(`UPDATE "device" SET "device_name" = $2 WHERE "id" = $1`, [b.id, hex(4)]);
      expect(await read(b)).toBe("1");
    });

    it("answers a device moved to another fleet as a fresh read does", async () => {
      const { device, etag } = await cached(endpoint);
      await sql(
        `UPDATE "device" SET "belongs_to__application" = 2, "should_be_running__release" = NULL WHERE "id" = $1`,
        [device.id],
      );
      const answer = await converges(device, endpoint, etag);
      expect(answer.status).toBe(200);
      expect(answer.etag).not.toBe(etag);
      if (endpoint === "v2") expect(JSON.parse(answer.body as string).target.appId).toBe(2);
    });

    it("refuses a deleted device's key, whether OData or plain SQL deleted it", async () => {
      for (const remove of [
        (device: Device) =>
          server.inject({
            method: "DELETE",
            url: `/v6/device(${device.id})`,
            headers: { authorization: admin },
          }),
        (device: Device) => sql(`DELETE FROM "device" WHERE "id" = $1`, [device.id]),
      ]) {
        const { device, etag } = await cached(endpoint);
        await remove(device);
        expect((await converges(device, endpoint, etag)).status).toBe(401);
      }
    });

    it("refuses a revoked or expired key, and answers the device's other key", async () => {
      for (const revoke of [
        (device: Device) =>
          sql(`DELETE FROM "api_key" WHERE "is_of__actor" = (SELECT "actor" FROM "device" WHERE "id" = $1)`, [
            device.id,
          ]),
        (device: Device) =>
          sql(
            `UPDATE "api_key" SET "expiry_date" = now() - interval '1 second' WHERE "is_of__actor" = (SELECT "actor" FROM "device" WHERE "id" = $1)`,
            [device.id],
          ),
      ]) {
        const { device, etag } = await cached(endpoint);
        await revoke(device);
        expect((await converges(device, endpoint, etag)).status).toBe(401);
      }
    });

    it("answers every change of the target with its new ETag, and 304 again without a statement", async () => {
      const { device, etag } = await cached(endpoint);
      const [release] = await test.db.query<{ id: number }>({
        text: `SELECT "id" FROM "release" WHERE "belongs_to__application" = 1 AND "status" = 'success' ORDER BY "id" LIMIT 1`,
        values: [],
      });
      const changes: [string, () => Promise<unknown>][] = [
        [
          "its name",
          () => sql(`UPDATE "device" SET "device_name" = $2 WHERE "id" = $1`, [device.id, hex(4)]),
        ],
        [
          "a device variable",
          () =>
            sql(
              `INSERT INTO "device_environment_variable" ("device", "name", "value") VALUES ($1, 'A', '1')`,
              [device.id],
            ),
        ],
        [
          "a fleet variable",
          () =>
            sql(
              `INSERT INTO "application_config_variable" ("application", "name", "value") VALUES (1, $1, '1')`,
              [`BALENA_${hex(4)}`],
            ),
        ],
        [
          "its pin",
          () =>
            sql(`UPDATE "device" SET "should_be_running__release" = $2 WHERE "id" = $1`, [
              device.id,
              release?.id,
            ]),
        ],
        [
          "its release's composition",
          () =>
            sql(`UPDATE "release" SET "composition" = $2::jsonb WHERE "id" = $1`, [
              release?.id,
              JSON.stringify({ services: { [hex(3)]: {} } }),
            ]),
        ],
      ];
      let current = etag;
      for (const [what, change] of changes) {
        await change();
        const answer = await converges(device, endpoint, current);
        expect(answer.status, what).toBe(200);
        current = answer.etag as string;
        // The fresh read is kept: the next poll is answered from the cache.
        const again = await poll(device, endpoint, current);
        expect([again.statusCode, again.statements], what).toEqual([304, 0]);
      }
    });
  });

  it.runIf(kind === "postgres")(
    "trusts nothing cached from when its LISTEN connection drops until it listens again",
    async () => {
      const { device, etag } = await cached("v3");
      const listening = async () => {
        const [row] = await test.db.query<{ n: number }>({
          text: `SELECT count(*)::int AS n FROM pg_stat_activity
                  WHERE application_name = 'fleetgate-listen' AND datname = current_database()`,
          values: [],
        });
        return (row?.n ?? 0) > 0;
      };
      await sql(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE application_name = 'fleetgate-listen' AND datname = current_database()`,
      );
      while (await listening()) await new Promise((resolve) => setTimeout(resolve, 5));
      // Time for the instance to see its socket closed (the loss itself is heard at once).
      await new Promise((resolve) => setTimeout(resolve, 50));
      // Unheard by this instance: its announcement goes to no one.
      await sql(`UPDATE "device" SET "device_name" = $2 WHERE "id" = $1`, [device.id, hex(4)]);
      // The listener waits half a second before it reconnects: these polls come before.
      const during = await poll(device, "v3", etag);
      expect(await listening(), "the test came too late: the listener is back").toBe(false);
      expect(during.statusCode).toBe(200);
      expect(during.statements).toBeGreaterThan(0);
      const renamed = during.headers.etag as string;
      const meanwhile = await poll(device, "v3", renamed);
      expect([meanwhile.statusCode, meanwhile.statements > 0]).toEqual([304, true]);
      // Nor is a fleet's shared part (target-parts.ts): a change to it, unheard, is read at once.
      await sql(
        `INSERT INTO "application_environment_variable" ("application", "name", "value") VALUES (2, $1, 'deaf')`,
        [`D${hex(3)}`],
      );
      const other = await register(2);
      const unheard = await poll(other, "v3");
      expect(await listening(), "the test came too late: the listener is back").toBe(false);
      expect(answerOf(unheard)).toEqual(
        await freshAnswer(test.db, { ...other, endpoint: "v3", ifNoneMatch: undefined }),
      );
      expect(unheard.headers["x-sql-statements"], "the device's own part and its fleet's").toBe("2");

      for (let waited = 0; !(await listening()); waited += 20) {
        expect(waited, "the listener did not come back").toBeLessThan(20_000);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Listening again: it rebuilds from fresh reads, then answers from the cache.
      let answered = await poll(device, "v3", renamed);
      for (let tries = 0; answered.statements > 0 && tries < 200; tries++) {
        expect(answered.statusCode).toBe(304);
        await new Promise((resolve) => setTimeout(resolve, 10));
        answered = await poll(device, "v3", renamed);
      }
      expect([answered.statusCode, answered.statements]).toEqual([304, 0]);
      // And hears changes again.
      await sql(`UPDATE "device" SET "device_name" = $2 WHERE "id" = $1`, [device.id, hex(4)]);
      expect((await converges(device, "v3", renamed)).status).toBe(200);
    },
    60_000,
  );
});
