import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyBox } from "../../../src/auth/key-box.ts";
import { loadDefaultCatalogue } from "../../../src/catalogue/defaults.ts";
import { writeResults } from "../../../src/core/job-lifecycle/create.ts";
import { databaseKinds } from "../../support/databases.ts";
import { startTestServer, type TestServer } from "../../support/server.ts";

// Issue 46: a large job's result rows are written in chunks, its devices called after the first
// (core/job-lifecycle/create.ts writeResults, proxy/jobs/lane.ts); each device still gets one
// result, written once, a cancel skips the rows not written yet, and the counts stay exact.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// More than a lane's first chunk of rows (1,000) and more than a job's inline rows (submit.ts).
const DEVICES = 1_100;

describe.each(databaseKinds)("a large job's result rows on %s", (kind) => {
  let server: TestServer;
  let fleet: number;
  let devices: number[];
  const calls = new Map<number, number>();
  const supervisor = createServer((request, response) => {
    const key = new URL(request.url ?? "/", "http://x").searchParams.get("apikey") ?? "";
    const n = Number(key.replace("key-", ""));
    calls.set(n, (calls.get(n) ?? 0) + 1);
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify({ device: n }));
  });

  const jobOf = async (job: number) =>
    (
      await server.test.db.query<{
        status: string;
        finished: boolean;
        unwritten: boolean;
        pending_count: number;
        done_count: number;
        ok_count: number;
        skipped_count: number;
      }>({
        text: `SELECT "status", "finished_at" IS NOT NULL AS finished, "target_devices" IS NOT NULL AS unwritten,
                 "pending_count", "done_count", "ok_count", "skipped_count"
               FROM "command_job" WHERE "id" = $1::int4`,
        values: [job],
      })
    )[0];

  beforeAll(async () => {
    server = await startTestServer(kind, {
      PROXY_TIMEOUT_MS: "10000",
      // Two lanes: both write chunks of the rows, under the job's lock.
      COMMAND_JOB_CONCURRENCY: "40",
      COMMAND_JOB_BATCH_SIZE: "20",
      COMMAND_JOB_INSTANCE_CONCURRENCY: "40",
      COMMAND_JOB_POLL_INTERVAL: "0.5",
      COMMAND_JOB_SUPERVISE_INTERVAL: "1",
    });
    await loadDefaultCatalogue(server.test.db);
    await new Promise<void>((resolve) => supervisor.listen(0, "127.0.0.1", resolve));
    const port = (supervisor.address() as { port: number }).port;
    const organization = await server.app.inject({
      method: "POST",
      url: "/v6/organization",
      payload: { name: "result-rows" },
    });
    const made = await server.app.inject({
      method: "POST",
      url: "/v6/application",
      payload: {
        app_name: "result-rows",
        device_type: "raspberrypi4-64",
        organization: JSON.parse(organization.body).id,
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    fleet = JSON.parse(made.body).id;
    const [secret] = await server.test.db.query<{ value: string }>({
      text: `SELECT "value" FROM "setting" WHERE "name" = 'supervisor_key_secret'`,
      values: [],
    });
    const box = new KeyBox(secret?.value ?? "");
    // Online devices as their state reports leave them; keys key-1…key-<DEVICES>.
    const rows = await server.test.db.query<{ id: number }>({
      text: `WITH made AS (
               INSERT INTO "actor" ("id")
               SELECT nextval(pg_get_serial_sequence('actor', 'id')) FROM generate_series(1, $1::int4)
               RETURNING "id"),
             numbered AS (SELECT "id", row_number() OVER (ORDER BY "id") AS n FROM made)
             INSERT INTO "device" ("belongs_to__application", "actor", "device_name", "is_of__device_type", "uuid",
               "is_online", "supervisor_api_address", "supervisor_api_port", "supervisor_api_key_ciphertext",
               "supervisor_version")
             SELECT $2::int4, numbered."id", 'rows-' || n, a."is_for__device_type", md5('rows-' || $2::int4 || '-' || n),
               true, '127.0.0.1', $3::int4, ($4::text[])[n], '17.0.0'
             FROM numbered, "application" a WHERE a."id" = $2::int4
             RETURNING "id"`,
      values: [DEVICES, fleet, port, Array.from({ length: DEVICES }, (_, n) => box.seal(`key-${n + 1}`))],
    });
    devices = rows.map((row) => row.id).sort((a, b) => a - b);
  }, 180_000);
  afterAll(async () => {
    await new Promise((resolve) => supervisor.close(resolve));
    await server?.close();
  });

  it("calls every device once and records one result for each, its rows written in chunks", async () => {
    const submitted = await server.app.inject({
      method: "POST",
      url: "/supervisor/v1/blink",
      headers: { prefer: "respond-async", "content-type": "application/json" },
      payload: JSON.stringify({ appId: fleet }),
    });
    expect(submitted.statusCode, submitted.body).toBe(202);
    const job = (JSON.parse(submitted.body) as { id: number }).id;
    const deadline = Date.now() + 120_000;
    while (!(await jobOf(job))?.finished) {
      if (Date.now() > deadline)
        throw new Error(`job ${job} did not finish: ${JSON.stringify(await jobOf(job))}`);
      await sleep(100);
    }
    expect(await jobOf(job)).toMatchObject({
      status: "succeeded",
      unwritten: false,
      pending_count: 0,
      done_count: DEVICES,
      ok_count: DEVICES,
    });
    expect(calls.size).toBe(DEVICES);
    expect([...calls.values()].every((count) => count === 1)).toBe(true);
    const [results] = await server.test.db.query<{ rows: number; devices: number; ok: number; once: number }>(
      {
        text: `SELECT count(*)::int4 AS rows, count(DISTINCT "device")::int4 AS devices,
               count(*) FILTER (WHERE "status" = 'ok')::int4 AS ok, count(*) FILTER (WHERE "attempts" = 1)::int4 AS once
             FROM "command_result" WHERE "command_job" = $1::int4`,
        values: [job],
      },
    );
    expect(results).toEqual({ rows: DEVICES, devices: DEVICES, ok: DEVICES, once: DEVICES });
  }, 180_000);

  it("writes the rest of a job cancelled while its rows were written as skipped, and then it is cancelled", async () => {
    // A job whose first three rows were written and whose other devices' rows were not, cancelled
    // (its pending rows skipped by the cancel, as core/job-lifecycle/cancel.ts does).
    const rest = devices.slice(3, 8);
    const [made] = await server.test.db.query<{ id: number }>({
      text: `INSERT INTO "command_job" ("is_issued_by__actor", "method", "path", "target", "status",
               "targeted_count", "pending_count", "skipped_count", "done_count", "target_devices", "cancelled_at")
             VALUES (1, 'POST', '/v1/blink', '{}', 'running', 8, 5, 3, 3, $1::jsonb, now()) RETURNING "id"`,
      values: [JSON.stringify(rest)],
    });
    const job = made?.id as number;
    await server.test.db.query({
      text: `INSERT INTO "command_result" ("command_job", "device", "status", "finished_at")
             SELECT $1::int4, d, 'skipped', now() FROM unnest($2::int4[]) AS d`,
      values: [job, devices.slice(0, 3)],
    });
    expect(await writeResults(server.test.db, job, 2)).toEqual({ written: 2, left: 3 });
    expect(await jobOf(job)).toMatchObject({
      finished: false,
      unwritten: true,
      pending_count: 3,
      skipped_count: 5,
    });
    expect(await writeResults(server.test.db, job, 10)).toEqual({ written: 3, left: 0 });
    expect(await jobOf(job)).toMatchObject({
      status: "cancelled",
      finished: true,
      unwritten: false,
      pending_count: 0,
      done_count: 8,
      skipped_count: 8,
    });
    // Written: nothing more to write, each device once, in the targets' order.
    expect(await writeResults(server.test.db, job, 10)).toEqual({ written: 0, left: 0 });
    const rows = await server.test.db.query<{ device: number; status: string }>({
      text: `SELECT "device", "status" FROM "command_result" WHERE "command_job" = $1::int4 ORDER BY "id"`,
      values: [job],
    });
    expect(rows).toEqual(devices.slice(0, 8).map((device) => ({ device, status: "skipped" })));
  });
});
