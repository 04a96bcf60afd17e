import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyBox } from "../../../src/auth/key-box.ts";
import { databaseKinds } from "../../support/databases.ts";
import { graphqlData } from "../../support/graphql/graphql.ts";
import { buildMatrixWorld, type World } from "../../support/matrix/matrix-build.ts";
import { startTestServer, type TestServer } from "../../support/server.ts";

// Issue 23: supervisor commands as durable jobs. `Prefer: respond-async` answers 202 with the job;
// the job runs on the queue (pg-boss) in batches, its devices' results are readable as
// command_result, it can be cancelled, and a retried submission with the same Idempotency-Key
// returns the same job. Every device "listens" on one loopback server standing in for its
// supervisor: /v1/reboot answers after SLOW_MS, everything else at once.

const SLOW_MS = 500;
const ATTEMPTS = 2;

interface Job {
  id: number;
  status: string;
  targeted_count: number;
  done_count: number;
  ok_count: number;
  failed_count: number;
  skipped_count: number;
  pending_count: number;
  finished_at: string | null;
  is_issued_by__actor: number;
  command_result?: Result[];
}

interface Result {
  id: number;
  device: { __id: number } | null;
  status: string;
  status_code: number | null;
  body: unknown;
  error: string | null;
  attempts: number;
  finished_at: string | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(databaseKinds)("supervisor commands as jobs on %s", (kind) => {
  let server: TestServer;
  let world: World;
  let supervisor: Server;
  /** How often each device (by id) was called. */
  const calls = new Map<number, number>();
  /** Fleet a1's devices: the world's two and six more. */
  let fleetDevices: number[];
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

  beforeAll(async () => {
    server = await startTestServer(kind, {
      PROXY_TIMEOUT_MS: "1000",
      COMMAND_JOB_BATCH_SIZE: "2",
      COMMAND_JOB_CONCURRENCY: "2",
      COMMAND_JOB_ATTEMPTS: String(ATTEMPTS),
      COMMAND_JOB_RETRY_DELAY: "1",
      COMMAND_JOB_POLL_INTERVAL: "0.5",
      COMMAND_JOB_SUPERVISE_INTERVAL: "1",
    });
    world = await buildMatrixWorld(server);
    supervisor = createServer((request, response) => {
      const key = new URL(request.url ?? "/", "http://x").searchParams.get("apikey") ?? "";
      const id = Number(key.replace("key-", ""));
      calls.set(id, (calls.get(id) ?? 0) + 1);
      const answer = () => {
        response.setHeader("content-type", "application/json");
        response.end(JSON.stringify({ device: id, path: request.url?.split("?")[0] }));
      };
      if (request.url?.startsWith("/v1/reboot")) setTimeout(answer, SLOW_MS);
      else answer();
    });
    await new Promise<void>((resolve) => supervisor.listen(0, "127.0.0.1", resolve));
    const port = (supervisor.address() as { port: number }).port;
    const extra: number[] = [];
    for (let n = 0; n < 6; n++) {
      const created = await server.app.inject({
        method: "POST",
        url: "/v6/device",
        payload: { belongs_to__application: world.fleets.a1, device_name: `a1-extra-${n}` },
      });
      extra.push(JSON.parse(created.body).id);
    }
    fleetDevices = [world.devices.a1, world.devices.a1b, ...extra];
    const [secret] = await server.test.db.query<{ value: string }>({
      text: `SELECT "value" FROM "setting" WHERE "name" = 'supervisor_key_secret'`,
      values: [],
    });
    const box = new KeyBox(secret?.value ?? "");
    const online = [...fleetDevices, world.devices.a2, world.devices.b1];
    for (const id of online) {
      // Fleet a2's device listens nowhere: every call to it is refused (a port nothing listens on).
      const devicePort = id === world.devices.a2 ? 1 : port;
      await server.test.db.query({
        text: `UPDATE "device" SET "is_online" = true, "supervisor_api_address" = '127.0.0.1',
                 "supervisor_api_port" = $2::int4, "supervisor_api_key_ciphertext" = $3::text,
                 "supervisor_version" = '17.0.0' WHERE "id" = $1::int4`,
        values: [id, devicePort, box.seal(`key-${id}`)],
      });
    }
  }, 180_000);
  afterAll(async () => {
    await new Promise((resolve) => supervisor?.close(resolve));
    await server?.close();
  });

  const submit = (path: string, body: object, headers: Record<string, string> = {}) =>
    server.app.inject({
      method: "POST",
      url: `/supervisor${path}`,
      headers: { prefer: "respond-async", "content-type": "application/json", ...headers },
      payload: JSON.stringify(body),
    });

  async function readJob(
    id: number,
    headers: Record<string, string> = {},
    query = "",
  ): Promise<Job | undefined> {
    const response = await server.app.inject({
      method: "GET",
      url: `/v6/command_job(${id})${query}`,
      headers,
    });
    expect(response.statusCode).toBe(200);
    return (JSON.parse(response.body) as { d: Job[] }).d[0];
  }

  /** Reads the job until `done` holds of it; every state seen is kept. */
  async function until(id: number, done: (job: Job) => boolean, seen: Job[] = []): Promise<Job> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const job = await readJob(id);
      if (!job) throw new Error(`job ${id} is not readable`);
      seen.push(job);
      if (done(job)) return job;
      if (Date.now() > deadline) throw new Error(`job ${id} stayed ${JSON.stringify(job)}`);
      await sleep(100);
    }
  }
  const finished = (job: Job) => job.finished_at !== null;

  it("answers 202 at once with Location and the job, runs it, and records each device's result", async () => {
    const started = Date.now();
    const response = await submit("/v1/blink", { appId: world.fleets.a1 });
    expect(response.statusCode).toBe(202);
    expect(Date.now() - started).toBeLessThan(5_000);
    const job = JSON.parse(response.body) as Job;
    expect(response.headers.location).toBe(`/v6/command_job(${job.id})`);
    expect(job).toMatchObject({ status: "queued", targeted_count: 8, pending_count: 8, done_count: 0 });
    const done = await until(job.id, finished);
    expect(done).toMatchObject({
      status: "succeeded",
      targeted_count: 8,
      done_count: 8,
      ok_count: 8,
      failed_count: 0,
    });
    const expanded = await readJob(job.id, {}, "?$expand=command_result($orderby=id)");
    const results = expanded?.command_result ?? [];
    expect(results.map((result) => result.device?.__id).sort()).toEqual([...fleetDevices].sort());
    for (const result of results) {
      expect(result).toMatchObject({ status: "ok", status_code: 200, attempts: 1, error: null });
      expect(result.finished_at).not.toBeNull();
      expect(result.body).toEqual({ device: result.device?.__id, path: "/v1/blink" });
    }
    const filtered = await readJob(job.id, {}, "?$expand=command_result($filter=status eq 'failed')");
    expect(filtered?.command_result).toEqual([]);
  });

  it("shows progress while it runs, batch by batch", async () => {
    const response = await submit("/v1/reboot", { appId: world.fleets.a1 });
    const job = JSON.parse(response.body) as Job;
    const seen: Job[] = [];
    const done = await until(job.id, finished, seen);
    expect(done).toMatchObject({ status: "succeeded", ok_count: 8 });
    // Two devices at a time, half a second each: the counts move in between.
    expect(
      seen.some((state) => state.status === "running" && state.done_count > 0 && state.done_count < 8),
    ).toBe(true);
    for (const state of seen) expect(state.done_count + state.pending_count).toBe(8);
  });

  it("retries an unreachable device with backoff up to the limit, then records it failed", async () => {
    const response = await submit("/v1/blink", { appId: world.fleets.a2 });
    expect(response.statusCode).toBe(202);
    const job = JSON.parse(response.body) as Job;
    const done = await until(job.id, finished);
    expect(done).toMatchObject({ status: "failed", targeted_count: 1, failed_count: 1, ok_count: 0 });
    const [result] = (await readJob(job.id, {}, "?$expand=command_result"))?.command_result ?? [];
    expect(result).toMatchObject({ status: "failed", status_code: 502, attempts: ATTEMPTS });
    expect(result?.error).toBeTruthy();
  });

  it("cancels: pending devices are skipped, running ones finish, then the job is cancelled", async () => {
    const response = await submit("/v1/reboot", { appId: world.fleets.a1 });
    const job = JSON.parse(response.body) as Job;
    await until(job.id, (state) => state.status === "running");
    const refused = await server.app.inject({
      method: "PATCH",
      url: `/v6/command_job(${job.id})`,
      payload: { status: "succeeded" },
    });
    expect(refused.statusCode).toBe(400);
    const cancel = await server.app.inject({
      method: "PATCH",
      url: `/v6/command_job(${job.id})`,
      payload: { status: "cancelled" },
    });
    expect(cancel.statusCode).toBe(200);
    const done = await until(job.id, finished);
    expect(done.status).toBe("cancelled");
    expect(done.skipped_count).toBeGreaterThan(0);
    expect(done.ok_count + done.skipped_count).toBe(8);
    const results = (await readJob(job.id, {}, "?$expand=command_result"))?.command_result ?? [];
    expect(results.filter((result) => result.status === "skipped")).toHaveLength(done.skipped_count);
    expect(results.every((result) => result.finished_at !== null)).toBe(true);
    // A finished job is not cancelled again.
    const again = await server.app.inject({
      method: "PATCH",
      url: `/v6/command_job(${job.id})`,
      payload: { status: "cancelled" },
    });
    expect(again.statusCode).toBe(200);
    const succeeded = await submit("/v1/blink", { deviceId: world.devices.a1 });
    const other = await until((JSON.parse(succeeded.body) as Job).id, finished);
    const late = await server.app.inject({
      method: "PATCH",
      url: `/v6/command_job(${other.id})`,
      payload: { status: "cancelled" },
    });
    expect(late.statusCode).toBe(400);
  });

  it("returns the same job for a retried submission with the same Idempotency-Key", async () => {
    const first = await submit("/v1/blink", { deviceId: world.devices.a1 }, { "idempotency-key": "blink-1" });
    const second = await submit(
      "/v1/blink",
      { deviceId: world.devices.a1 },
      { "idempotency-key": "blink-1" },
    );
    const other = await submit("/v1/blink", { deviceId: world.devices.a1 }, { "idempotency-key": "blink-2" });
    const [a, b, c] = [first, second, other].map((response) => JSON.parse(response.body) as Job);
    expect(first.statusCode).toBe(202);
    expect(second.statusCode).toBe(202);
    expect(b?.id).toBe(a?.id);
    expect(c?.id).not.toBe(a?.id);
    // The key is the actor's own: another user's same key makes their own job.
    const bobs = await submit(
      "/v1/blink",
      { deviceId: world.devices.b1 },
      { "idempotency-key": "blink-1", ...bearer(world.creds.bob) },
    );
    expect(bobs.statusCode).toBe(202);
    expect((JSON.parse(bobs.body) as Job).id).not.toBe(a?.id);
    const jobs = await server.test.db.query<{ count: number }>({
      text: `SELECT count(*)::int4 AS count FROM "command_job" WHERE "idempotency_key" = 'blink-1'`,
      values: [],
    });
    expect(jobs[0]?.count).toBe(2);
    const bad = await submit(
      "/v1/blink",
      { deviceId: world.devices.a1 },
      { "idempotency-key": "x".repeat(300) },
    );
    expect(bad.statusCode).toBe(400);
  });

  it("shows a job to whoever may write every device it targeted (and admins); another tenant sees nothing of it", async () => {
    const alice = bearer(world.creds.alice);
    const response = await submit("/v1/blink", { appId: world.fleets.a1 }, alice);
    expect(response.statusCode).toBe(202);
    const job = JSON.parse(response.body) as Job;
    await until(job.id, finished);
    const own = await readJob(job.id, alice, "?$expand=command_result");
    expect(own?.command_result).toHaveLength(8);
    expect(await readJob(job.id)).toBeDefined(); // the admin
    // Bob (another organization): no job, no results, by key or by listing.
    const bob = bearer(world.creds.bob);
    expect(await readJob(job.id, bob)).toBeUndefined();
    const listed = await server.app.inject({ method: "GET", url: "/v6/command_result", headers: bob });
    const bobsResults = (JSON.parse(listed.body) as { d: Result[] }).d;
    expect(bobsResults.every((result) => result.device?.__id === world.devices.b1)).toBe(true);
    const cancel = await server.app.inject({
      method: "PATCH",
      url: `/v6/command_job(${job.id})`,
      headers: bob,
      payload: { status: "cancelled" },
    });
    expect(cancel.statusCode).not.toBe(403);
    expect((await readJob(job.id))?.status).toBe("succeeded");
    // He cannot send a job to alice's devices either: they do not exist for him (404, not 403).
    const theirs = await submit("/v1/blink", { appId: world.fleets.a1 }, bob);
    expect(theirs.statusCode).toBe(404);
    // A job follows its devices, not its sender: alice sees the admin's job over her device (she may
    // write it), with its result, and bob does not.
    const admins = JSON.parse((await submit("/v1/blink", { deviceId: world.devices.a1 })).body) as Job;
    await until(admins.id, finished);
    expect((await readJob(admins.id, alice, "?$expand=command_result"))?.command_result).toHaveLength(1);
    expect(await readJob(admins.id, bob)).toBeUndefined();
    // Jobs are made by the proxy only.
    const created = await server.app.inject({
      method: "POST",
      url: "/v6/command_job",
      headers: alice,
      payload: { path: "/v1/blink", method: "POST" },
    });
    expect(created.statusCode).toBe(400);
  });

  it("leaves a job whose device was deleted since to admins", async () => {
    const alice = bearer(world.creds.alice);
    const response = await submit("/v1/blink", { deviceId: world.devices.a1 }, alice);
    const job = JSON.parse(response.body) as Job;
    await until(job.id, finished);
    expect(await readJob(job.id, alice)).toBeDefined();
    // As deleting the device leaves its result (the link set to null).
    await server.test.db.query({
      text: `UPDATE "command_result" SET "device" = NULL WHERE "command_job" = $1::int4`,
      values: [job.id],
    });
    expect(await readJob(job.id, alice)).toBeUndefined();
    expect(await readJob(job.id, bearer(world.creds.bob))).toBeUndefined();
    expect(await readJob(job.id)).toBeDefined(); // the admin
  });

  it("leaves a job to admins while its result rows are being written", async () => {
    const alice = bearer(world.creds.alice);
    const response = await submit("/v1/blink", { deviceId: world.devices.a1 }, alice);
    const job = JSON.parse(response.body) as Job;
    await until(job.id, finished);
    expect(await readJob(job.id, alice)).toBeDefined();
    // As a large job's lanes leave it between two chunks of rows (core/job-lifecycle/create.ts
    // writeResults): the devices still to write, bob's among them, are not results yet, so the rows
    // written so far cannot say who may see the job.
    await server.test.db.query({
      text: `UPDATE "command_job" SET "target_devices" = $2::jsonb WHERE "id" = $1::int4`,
      values: [job.id, JSON.stringify([world.devices.b1])],
    });
    expect(await readJob(job.id, alice)).toBeUndefined();
    expect(await readJob(job.id)).toBeDefined(); // the admin
    await server.test.db.query({
      text: `UPDATE "command_job" SET "target_devices" = NULL WHERE "id" = $1::int4`,
      values: [job.id],
    });
    expect(await readJob(job.id, alice)).toBeDefined();
  });

  it("leaves the synchronous proxy as it was without the header", async () => {
    const response = await server.app.inject({
      method: "POST",
      url: "/supervisor/v1/blink",
      payload: { appId: world.fleets.a1 },
    });
    expect(response.statusCode).toBe(207);
    expect(JSON.parse(response.body)).toHaveLength(8);
  });

  it("sends a GraphQL supervisor mutation as a job with async: true", async () => {
    const mutation = `mutation($appId: Int!) {
      supervisorBlink(target: { appId: $appId }, async: true, idempotencyKey: "gql-1") {
        targets results { deviceId } job { id status targetedCount }
      }
    }`;
    type Reply = {
      supervisorBlink: { targets: number; results: unknown[]; job: { id: number; status: string } };
    };
    const first = await graphqlData<Reply>(server, mutation, { appId: world.fleets.a1 });
    expect(first.supervisorBlink).toMatchObject({ targets: 8, results: [], job: { targetedCount: 8 } });
    const again = await graphqlData<Reply>(server, mutation, { appId: world.fleets.a1 });
    expect(again.supervisorBlink.job.id).toBe(first.supervisorBlink.job.id);
    await until(first.supervisorBlink.job.id, finished);
    const read = await graphqlData<{
      commandJob: {
        status: string;
        okCount: number;
        commandResult: { status: string; statusCode: number }[];
      };
    }>(
      server,
      `query($id: Int!) { commandJob(id: $id) { status okCount commandResult { status statusCode } } }`,
      {
        id: first.supervisorBlink.job.id,
      },
    );
    expect(read.commandJob).toMatchObject({ status: "succeeded", okCount: 8 });
    expect(read.commandJob.commandResult).toHaveLength(8);
  });
});
