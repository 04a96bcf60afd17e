import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../../src/auth/api-keys.ts";
import { KeyBox } from "../../../src/auth/key-box.ts";
import { hashPassword } from "../../../src/auth/passwords.ts";
import { JOB_QUEUE } from "../../../src/proxy/jobs/queue.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../../support/databases.ts";
import { type RunningServer, startServer } from "../../support/processes.ts";

// Issue 23's fault test: two `fleetgate serve` processes on one PostgreSQL share a job over 2,000
// simulated devices (one loopback server answers for all of them, each call after DEVICE_MS); one
// instance is killed with SIGKILL in the middle. Its lanes' heartbeat stops and its claims' leases
// end; the other instance takes both over, and every device ends with exactly one recorded result,
// though some were called twice (once by the dead instance, once by the survivor) when it was
// killed between the call and the record.

const DEVICES = 2_000;
const DEVICE_MS = 1_000;
const LANE = 25;
const INSTANCE_LANES = 2;
const SECRET = "fault-test-supervisor-key-secret-0123456789";
const ADMIN_ID = 1_000_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!databaseKinds.includes("postgres"))("a job shared by two instances, one killed", () => {
  let test: TestDatabase;
  let supervisor: Server;
  let first: RunningServer | undefined;
  let second: RunningServer | undefined;
  /** Calls per device, by the number in its key. */
  const calls = new Map<number, number>();

  beforeAll(async () => {
    test = await freshDatabase("postgres");
    supervisor = createServer((request, response) => {
      const key = new URL(request.url ?? "/", "http://x").searchParams.get("apikey") ?? "";
      const n = Number(key.replace("key-", ""));
      calls.set(n, (calls.get(n) ?? 0) + 1);
      setTimeout(() => {
        response.setHeader("content-type", "text/plain");
        response.end("OK");
      }, DEVICE_MS);
    });
    await new Promise<void>((resolve) => supervisor.listen(0, "127.0.0.1", resolve));
  }, 60_000);

  afterAll(async () => {
    // Whatever happened: no process left behind.
    for (const instance of [first, second]) {
      if (instance && instance.child.exitCode === null && instance.child.signalCode === null) {
        instance.child.kill("SIGKILL");
      }
    }
    await new Promise((resolve) => supervisor?.close(resolve));
    supervisor?.closeAllConnections();
    await test?.drop();
  });

  it("finishes on the survivor with exactly one result per device", async () => {
    const env = {
      DATABASE_URL: test.url as string,
      SUPERVISOR_KEY_SECRET: SECRET,
      ADMIN_PASSWORD: "fault-test-admin",
      LOG_LEVEL: "info",
      PROXY_TIMEOUT_MS: "5000",
      COMMAND_JOB_BATCH_SIZE: String(LANE),
      // Devices at once: 4 lanes of a job over both instances, 2 lanes per instance.
      COMMAND_JOB_CONCURRENCY: String(4 * LANE),
      COMMAND_JOB_INSTANCE_CONCURRENCY: String(INSTANCE_LANES * LANE),
      COMMAND_JOB_HEARTBEAT: "10",
      COMMAND_JOB_SUPERVISE_INTERVAL: "1",
      COMMAND_JOB_POLL_INTERVAL: "0.5",
      COMMAND_JOB_RETRY_DELAY: "1",
    };
    first = await startServer(env);
    second = await startServer(env);

    // The test's admin and the devices, written directly: 2,000 devices through the API would be
    // most of this test's time.
    const db = test.db;
    await db.query({ text: `INSERT INTO "actor" ("id") VALUES ($1::int4)`, values: [ADMIN_ID] });
    await db.query({
      text: `INSERT INTO "user" ("id", "actor", "username", "email", "password", "jwt_secret", "is_admin")
             VALUES ($1::int4, $1::int4, 'fault-admin', 'fault-admin@localhost', $2::text, 'test', true)`,
      values: [ADMIN_ID, await hashPassword("fault-admin-password")],
    });
    const key = await createApiKey(db, { actor: ADMIN_ID, name: "fault" });
    const api = (url: string, method: string, path: string, body: unknown, headers = {}) =>
      fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    const organization = await (await api(first.url, "POST", "/v6/organization", { name: "fault" })).json();
    const fleet = (await (
      await api(first.url, "POST", "/v6/application", {
        app_name: "fault",
        device_type: "raspberrypi4-64",
        organization: organization.id,
      })
    ).json()) as { id: number };
    const box = new KeyBox(SECRET);
    const port = (supervisor.address() as { port: number }).port;
    await db.query({
      text: `WITH made AS (
               INSERT INTO "actor" ("id")
               SELECT nextval(pg_get_serial_sequence('actor', 'id')) FROM generate_series(1, $1::int4)
               RETURNING "id"),
             numbered AS (SELECT "id", row_number() OVER (ORDER BY "id") AS n FROM made)
             INSERT INTO "device" ("belongs_to__application", "actor", "device_name", "is_of__device_type", "uuid",
               "is_online", "supervisor_api_address", "supervisor_api_port", "supervisor_api_key_ciphertext",
               "supervisor_version")
             SELECT $2::int4, numbered."id", 'fault-' || n, a."is_for__device_type", md5('fault-' || n), true,
               '127.0.0.1', $3::int4, ($4::text[])[n], '17.0.0'
             FROM numbered, "application" a WHERE a."id" = $2::int4`,
      values: [DEVICES, fleet.id, port, Array.from({ length: DEVICES }, (_, n) => box.seal(`key-${n + 1}`))],
    });

    const submitted = await api(
      first.url,
      "POST",
      "/supervisor/v1/blink",
      { appId: fleet.id },
      {
        prefer: "respond-async",
      },
    );
    expect(submitted.status).toBe(202);
    const job = (await submitted.json()) as { id: number; targeted_count: number };
    expect(job.targeted_count).toBe(DEVICES);
    const state = async () => {
      const [row] = await db.query<{
        status: string;
        done_count: number;
        ok_count: number;
        finished: boolean;
      }>({
        text: `SELECT "status", "done_count", "ok_count", "finished_at" IS NOT NULL AS finished
               FROM "command_job" WHERE "id" = $1::int4`,
        values: [job.id],
      });
      if (!row) throw new Error("no job");
      return row;
    };

    // The second instance joins the job it did not receive (it looks for unfinished jobs every second).
    const joinBy = Date.now() + 30_000;
    while (!second.stdout().includes("command job queue started")) {
      if (Date.now() > joinBy) throw new Error(`the second instance did not join:\n${second.stdout()}`);
      await sleep(100);
    }
    // Killed mid-job while it holds a lane: an instance runs at most INSTANCE_LANES lanes at once,
    // so with more active than that, the first instance holds at least one.
    const activeLanes = async () => {
      const [row] = await db.query<{ active: number }>({
        text: `SELECT count(*)::int4 AS active FROM pgboss.job WHERE name = $1 AND state = 'active'`,
        values: [JOB_QUEUE],
      });
      return row?.active ?? 0;
    };
    const midwayBy = Date.now() + 90_000;
    while ((await state()).done_count < DEVICES / 5 || (await activeLanes()) <= INSTANCE_LANES) {
      if (Date.now() > midwayBy)
        throw new Error(`the job did not progress: ${JSON.stringify(await state())}`);
      await sleep(20);
    }
    first.child.kill("SIGKILL");
    const killedAt = await state();
    expect(killedAt.finished).toBe(false);

    const doneBy = Date.now() + 90_000;
    let last = await state();
    while (!last.finished) {
      if (Date.now() > doneBy) throw new Error(`the job did not finish: ${JSON.stringify(last)}`);
      await sleep(250);
      last = await state();
    }
    expect(last).toMatchObject({ status: "succeeded", done_count: DEVICES, ok_count: DEVICES });

    const [results] = await db.query<{
      rows: number;
      devices: number;
      finished: number;
      ok: number;
      retaken: number;
    }>({
      text: `SELECT count(*)::int4 AS rows, count(DISTINCT "device")::int4 AS devices,
               count(*) FILTER (WHERE "finished_at" IS NOT NULL)::int4 AS finished,
               count(*) FILTER (WHERE "status" = 'ok')::int4 AS ok,
               count(*) FILTER (WHERE "attempts" > 1)::int4 AS retaken
             FROM "command_result" WHERE "command_job" = $1::int4`,
      values: [job.id],
    });
    expect(results).toMatchObject({ rows: DEVICES, devices: DEVICES, finished: DEVICES, ok: DEVICES });
    // The killed instance's claims were taken over: their devices were claimed (and called) again,
    // and each still has its one result.
    expect(results?.retaken).toBeGreaterThan(0);
    // Every device was called; one the dead instance had already called is called again (at least
    // once, recorded once), one it had only claimed is called once.
    expect(calls.size).toBe(DEVICES);
    await second.stop();
  }, 180_000);
});
