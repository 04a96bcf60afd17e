import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/database.ts";
import { openPostgres } from "../../src/db/postgres.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";
import { testAdminKey } from "../support/server.ts";
import { type Instance, startInstance } from "../support/target-instances.ts";
import { answerOf, type Endpoint, freshAnswer } from "../support/target-oracle.ts";

// The target-state cache against a fresh read (DESIGN.md, "Derived state is a cache with a proof"):
// random sequences of writes (OData and GraphQL on any instance, plain SQL from outside), and after
// each, polls of every device on every instance (each with the ETag it last got, as a supervisor
// polls), while other polls load the instances. Every 200 and 304 must be what a fresh read gives
// within a second of the write's commit (the time its announcement takes to arrive), and stay so.

const INSTANCES = 3;
const STALE_FOR_AT_MOST_MS = 1_000;
const hex = (bytes: number) => randomBytes(bytes).toString("hex");

/** The `index`th of `list`, which the test made: there is one. */
function nth<T>(list: readonly T[], index: number): T {
  const item = list[index];
  if (item === undefined) throw new Error(`no item ${index}`);
  return item;
}

type Write =
  | { kind: "odata-name" | "graphql-name"; device: number; via: number }
  | { kind: "sql-device-variable" | "sql-pin"; device: number; pick: number }
  | { kind: "sql-fleet-variable" | "sql-fleet-release" | "sql-composition"; fleet: number; pick: number }
  | { kind: "sql-move"; device: number; fleet: number };

const DEVICES = 4;
const writes: fc.Arbitrary<Write> = fc.oneof(
  fc.record({
    kind: fc.constantFrom("odata-name" as const, "graphql-name" as const),
    device: fc.nat(DEVICES - 1),
    via: fc.nat(INSTANCES - 1),
  }),
  fc.record({
    kind: fc.constantFrom("sql-device-variable" as const, "sql-pin" as const),
    device: fc.nat(DEVICES - 1),
    pick: fc.nat(5),
  }),
  fc.record({
    kind: fc.constantFrom(
      "sql-fleet-variable" as const,
      "sql-fleet-release" as const,
      "sql-composition" as const,
    ),
    fleet: fc.constantFrom(1, 2),
    pick: fc.nat(5),
  }),
  fc.record({
    kind: fc.constant("sql-move" as const),
    device: fc.nat(DEVICES - 1),
    fleet: fc.constantFrom(1, 2),
  }),
);

describe.runIf(databaseKinds.includes("postgres"))("the target-state cache against fresh reads", () => {
  let test: TestDatabase;
  /** The fresh reads' own connections, enough for every poll's at once. */
  let oracle: Database;
  const instances: Instance[] = [];
  let admin: string;
  const devices: { id: number; uuid: string; key: string }[] = [];
  const releases = new Map<number, number[]>();
  const delays: number[] = [];
  let loading = true;
  let load: Promise<void> | undefined;

  beforeAll(async () => {
    test = await freshDatabase("postgres");
    oracle = openPostgres({ url: test.url as string, poolSize: 24 });
    await seedDemo(test.db);
    admin = `Bearer ${await testAdminKey(test)}`;
    for (let i = 0; i < INSTANCES; i++) instances.push(await startInstance(test, 8));
    for (const fleet of [1, 2]) {
      const key = JSON.parse(
        (
          await nth(instances, 0).inject({
            method: "POST",
            url: `/api-key/application/${fleet}/provisioning`,
            headers: { authorization: admin },
          })
        ).body,
      ) as string;
      for (let d = 0; d < DEVICES / 2; d++) {
        const uuid = hex(16);
        const response = await nth(instances, 0).inject({
          method: "POST",
          url: "/device/register",
          headers: { authorization: `Bearer ${key}` },
          payload: { application: fleet, uuid },
        });
        const { id, api_key } = JSON.parse(response.body) as { id: number; api_key: string };
        devices.push({ id, uuid, key: api_key });
      }
      const rows = await test.db.query<{ id: number }>({
        text: `SELECT "id" FROM "release" WHERE "belongs_to__application" = $1 ORDER BY "id"`,
        values: [fleet],
      });
      releases.set(
        fleet,
        rows.map((row) => row.id),
      );
    }
    // Load beside the test's own polls: every device polls every instance, again and again, with
    // the ETag it last got (as a supervisor does: a poll without one would read, and refresh the cache).
    load = (async () => {
      const last = new Map<string, string>();
      while (loading)
        await Promise.all(
          instances.flatMap((instance, i) =>
            devices.map(async (device) => {
              const response = await poll(instance, device, "v3", last.get(`${i} ${device.uuid}`));
              if (response.statusCode === 200)
                last.set(`${i} ${device.uuid}`, response.headers.etag as string);
            }),
          ),
        )
          .catch(() => {})
          .then(() => new Promise((resolve) => setTimeout(resolve, 10)));
    })();
  }, 180_000);
  afterAll(async () => {
    loading = false;
    await load;
    for (const instance of instances) await instance.close();
    await oracle?.close();
    await test?.drop();
  });

  const poll = (instance: Instance, device: (typeof devices)[number], endpoint: Endpoint, etag?: string) =>
    instance.inject({
      method: "GET",
      url: `/device/${endpoint}/${device.uuid}/state`,
      headers: {
        authorization: `Bearer ${device.key}`,
        ...(etag !== undefined && { "if-none-match": etag }),
      },
    });
  const sql = (text: string, values: unknown[]) => test.db.query({ text, values });
  const pickOf = (list: readonly number[], pick: number) => list[pick % list.length] as number;

  async function write(step: Write): Promise<void> {
    switch (step.kind) {
      case "odata-name": {
        const { id } = nth(devices, step.device);
        const response = await nth(instances, step.via).inject({
          method: "PATCH",
          url: `/v6/device(${id})`,
          headers: { authorization: admin },
          payload: { device_name: `o${hex(3)}` },
        });
        expect(response.statusCode, response.body).toBe(200);
        return;
      }
      case "graphql-name": {
        const { id } = nth(devices, step.device);
        const response = await nth(instances, step.via).inject({
          method: "POST",
          url: "/graphql",
          headers: { authorization: admin },
          payload: {
            query: `mutation { updateDevice(id: ${id}, patch: {deviceName: "g${hex(3)}"}) { id } }`,
          },
        });
        expect(response.statusCode, response.body).toBe(200);
        expect(JSON.parse(response.body).errors, response.body).toBeUndefined();
        return;
      }
      case "sql-device-variable":
        await sql(
          `INSERT INTO "device_environment_variable" ("device", "name", "value") VALUES ($1, $2, $3)
           ON CONFLICT ("device", "name") DO UPDATE SET "value" = EXCLUDED."value"`,
          [nth(devices, step.device).id, `V${step.pick}`, hex(2)],
        );
        return;
      case "sql-pin": {
        const [row] = await test.db.query<{ fleet: number }>({
          text: `SELECT "belongs_to__application" AS fleet FROM "device" WHERE "id" = $1`,
          values: [nth(devices, step.device).id],
        });
        const release = step.pick === 0 ? null : pickOf(releases.get(nth([row], 0).fleet) ?? [], step.pick);
        await sql(`UPDATE "device" SET "should_be_running__release" = $2 WHERE "id" = $1`, [
          nth(devices, step.device).id,
          release,
        ]);
        return;
      }
      case "sql-fleet-variable":
        await sql(
          `INSERT INTO "application_config_variable" ("application", "name", "value") VALUES ($1, $2, $3)
           ON CONFLICT ("application", "name") DO UPDATE SET "value" = EXCLUDED."value"`,
          [step.fleet, `BALENA_V${step.pick}`, hex(2)],
        );
        return;
      case "sql-fleet-release":
        await sql(`UPDATE "application" SET "should_be_running__release" = $2 WHERE "id" = $1`, [
          step.fleet,
          pickOf(releases.get(step.fleet) ?? [], step.pick),
        ]);
        return;
      case "sql-composition":
        await sql(`UPDATE "release" SET "composition" = $2::jsonb WHERE "id" = $1`, [
          pickOf(releases.get(step.fleet) ?? [], step.pick),
          JSON.stringify({ services: { [`s${hex(2)}`]: { image: "alpine" } } }),
        ]);
        return;
      case "sql-move":
        await sql(
          `UPDATE "device" SET "belongs_to__application" = $2, "should_be_running__release" = NULL WHERE "id" = $1`,
          [nth(devices, step.device).id, step.fleet],
        );
        return;
    }
  }

  /** Every device's poll on every instance, until each answers as a fresh read does. */
  async function converge(etags: Map<string, string | undefined>, committed: number): Promise<void> {
    const polls = instances.flatMap((instance, i) =>
      devices.flatMap((device) =>
        (["v2", "v3"] as const).map(async (endpoint) => {
          const slot = `${i} ${device.uuid} ${endpoint}`;
          for (let stale = false; ; stale = true) {
            const ifNoneMatch = etags.get(slot);
            const answer = answerOf(await poll(instance, device, endpoint, ifNoneMatch));
            const fresh = await freshAnswer(oracle, { ...device, endpoint, ifNoneMatch });
            if (JSON.stringify(answer) === JSON.stringify(fresh)) {
              // How long a poll answered what the write changed: the announcement's delay, or less.
              if (stale) delays.push(Date.now() - committed);
              if (answer.etag) etags.set(slot, answer.etag);
              return;
            }
            expect(
              Date.now() - committed,
              `${slot}: ${JSON.stringify(answer)}, fresh ${JSON.stringify(fresh)}`,
            ).toBeLessThan(STALE_FOR_AT_MOST_MS);
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
        }),
      ),
    );
    await Promise.all(polls);
  }

  it("answers every poll as a fresh read does within a second of each write", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(writes, { minLength: 4, maxLength: 10 }), async (steps) => {
        const etags = new Map<string, string | undefined>();
        await converge(etags, Date.now());
        for (const step of steps) {
          await write(step);
          await converge(etags, Date.now());
        }
      }),
      { numRuns: 6 },
    );
    delays.sort((a, b) => a - b);
    expect(delays.length, "no poll was ever answered stale: the test shows nothing").toBeGreaterThan(0);
    const at = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))];
    // From a write's answer to a poll that answers it, where a poll first answered stale.
    console.log(
      `target-state cache: ${delays.length} stale polls, answered fresh after: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${delays.at(-1)} ms`,
    );
  }, 300_000);
});
