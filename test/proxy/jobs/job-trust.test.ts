import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyBox } from "../../../src/auth/key-box.ts";
import { databaseKinds } from "../../support/databases.ts";
import { graphql } from "../../support/graphql/graphql.ts";
import { buildMatrixWorld, DEVICE_TYPE, type World } from "../../support/matrix/matrix-build.ts";
import { startTestServer, type TestServer } from "../../support/server.ts";

// Issue 27, "Trust on the long-lived paths", for command jobs:
// - each batch reads its devices again under its sender's rights as they are then (DESIGN.md,
//   "Later is now"): a device the sender lost is skipped ("forbidden") and never called; a sender
//   who is gone or in no organization any more cancels the rest of the job;
// - an Idempotency-Key stands for one request (draft-ietf-httpapi-idempotency-key-header): a retry
//   gets its job whatever became of its devices, another request with the key is a 422.
// One batch of one device at a time, so a change made while a device is being called is in place
// before the next batch reads its devices: deterministic, not a race. Every device "listens" on one
// loopback server standing in for its supervisor, which runs the test's hook before it answers.

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
  command_result?: Result[];
}

interface Result {
  device: { __id: number } | null;
  status: string;
  status_code: number | null;
  error: string | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(databaseKinds)("command jobs act with their sender's current rights on %s", (kind) => {
  let server: TestServer;
  let world: World;
  let supervisor: Server;
  let port: number;
  let box: KeyBox;
  /** How often each device (by id) was called. */
  const calls = new Map<number, number>();
  /** Run once, at the first call of any device, before it is answered. */
  let atFirstCall: (() => Promise<void>) | undefined;
  const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

  beforeAll(async () => {
    server = await startTestServer(kind, {
      PROXY_TIMEOUT_MS: "5000",
      COMMAND_JOB_BATCH_SIZE: "1",
      COMMAND_JOB_CONCURRENCY: "1",
      COMMAND_JOB_INSTANCE_CONCURRENCY: "1",
      COMMAND_JOB_ATTEMPTS: "1",
      COMMAND_JOB_POLL_INTERVAL: "0.5",
      COMMAND_JOB_SUPERVISE_INTERVAL: "1",
    });
    world = await buildMatrixWorld(server);
    supervisor = createServer(async (request, response) => {
      const key = new URL(request.url ?? "/", "http://x").searchParams.get("apikey") ?? "";
      const id = Number(key.replace("key-", ""));
      calls.set(id, (calls.get(id) ?? 0) + 1);
      const hook = atFirstCall;
      atFirstCall = undefined;
      await hook?.();
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ device: id }));
    });
    await new Promise<void>((resolve) => supervisor.listen(0, "127.0.0.1", resolve));
    port = (supervisor.address() as { port: number }).port;
    const [secret] = await server.test.db.query<{ value: string }>({
      text: `SELECT "value" FROM "setting" WHERE "name" = 'supervisor_key_secret'`,
      values: [],
    });
    box = new KeyBox(secret?.value ?? "");
  }, 180_000);
  afterAll(async () => {
    if (supervisor) await new Promise((resolve) => supervisor.close(resolve));
    await server?.close();
  });

  const admin = (method: "POST" | "PATCH" | "DELETE", url: string, payload?: object) =>
    server.app.inject({
      method,
      url,
      ...(payload
        ? { headers: { "content-type": "application/json" }, payload: JSON.stringify(payload) }
        : {}),
    });

  /** A new fleet of organization A with `count` online devices, listening on the stand-in. */
  async function fleetOf(name: string, count: number): Promise<{ fleet: number; devices: number[] }> {
    const made = await admin("POST", "/v6/application", {
      app_name: name,
      device_type: DEVICE_TYPE,
      organization: world.orgs.a,
    });
    expect(made.statusCode, made.body).toBe(201);
    const fleet = (JSON.parse(made.body) as { id: number }).id;
    const devices: number[] = [];
    for (let n = 0; n < count; n++) {
      const device = await admin("POST", "/v6/device", {
        belongs_to__application: fleet,
        device_name: `${name}-${n}`,
      });
      const id = (JSON.parse(device.body) as { id: number }).id;
      devices.push(id);
      // As the device's state report leaves it.
      await server.test.db.query({
        text: `UPDATE "device" SET "is_online" = true, "supervisor_api_address" = '127.0.0.1',
                 "supervisor_api_port" = $2::int4, "supervisor_api_key_ciphertext" = $3::text,
                 "supervisor_version" = '17.0.0' WHERE "id" = $1::int4`,
        values: [id, port, box.seal(`key-${id}`)],
      });
    }
    return { fleet, devices };
  }

  /** An admin moves devices into organization B's fleet: whoever sent a job to them loses them. */
  async function moveToOrganizationB(devices: readonly number[]) {
    for (const device of devices) {
      const moved = await admin("PATCH", `/v6/device(${device})`, {
        belongs_to__application: world.fleets.b1,
      });
      expect(moved.statusCode, moved.body).toBe(200);
    }
  }

  /** A user of organization A (a member), with a session token. */
  async function memberOfA(username: string): Promise<{ id: number; token: string }> {
    const made = await admin("POST", "/v6/user", {
      username,
      email: `${username}@example.com`,
      password: `password-${username}`,
    });
    expect(made.statusCode, made.body).toBe(201);
    const id = (JSON.parse(made.body) as { id: number }).id;
    const joined = await admin("POST", "/v6/organization_membership", {
      user: id,
      is_member_of__organization: world.orgs.a,
      role: "member",
    });
    expect(joined.statusCode, joined.body).toBe(201);
    const login = await server.app.inject({
      method: "POST",
      url: "/login_",
      headers: { authorization: "", "content-type": "application/json" },
      payload: JSON.stringify({ username, password: `password-${username}` }),
    });
    expect(login.statusCode, login.body).toBe(200);
    return { id, token: login.body };
  }

  const submit = (path: string, body: object, headers: Record<string, string>) =>
    server.app.inject({
      method: "POST",
      url: `/supervisor${path}`,
      headers: { prefer: "respond-async", "content-type": "application/json", ...headers },
      payload: JSON.stringify(body),
    });

  /** The job as the admin reads it, with its results, once it finished. */
  async function finishedJob(id: number): Promise<Job> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const response = await server.app.inject({
        method: "GET",
        url: `/v6/command_job(${id})?$expand=command_result`,
      });
      const job = (JSON.parse(response.body) as { d: Job[] }).d[0];
      if (!job) throw new Error(`job ${id} is not readable`);
      if (job.finished_at !== null) return job;
      if (Date.now() > deadline) throw new Error(`job ${id} stayed ${JSON.stringify(job)}`);
      await sleep(100);
    }
  }

  const resultOf = (job: Job, device: number) =>
    job.command_result?.find((result) => result.device?.__id === device);

  it("skips, without calling them, the devices its sender may no longer write", async () => {
    const { fleet, devices } = await fleetOf("moving-fleet", 3);
    // While the first device (whichever it is) is called, the admin moves the other two away.
    let first: number | undefined;
    atFirstCall = async () => {
      first = devices.find((device) => calls.has(device));
      await moveToOrganizationB(devices.filter((device) => device !== first));
    };
    const response = await submit("/v1/blink", { appId: fleet }, bearer(world.creds.alice));
    expect(response.statusCode, response.body).toBe(202);
    const job = await finishedJob((JSON.parse(response.body) as Job).id);
    expect(job).toMatchObject({
      // Issue 45: devices not called are no successes (README "Commands as jobs").
      status: "partially_failed",
      targeted_count: 3,
      done_count: 3,
      ok_count: 1,
      failed_count: 0,
      skipped_count: 2,
      pending_count: 0,
    });
    expect(first).toBeDefined();
    expect(resultOf(job, first as number)).toMatchObject({ status: "ok", status_code: 200 });
    for (const lost of devices.filter((device) => device !== first)) {
      expect(resultOf(job, lost)).toMatchObject({ status: "skipped", status_code: null, error: "forbidden" });
      expect(calls.get(lost)).toBeUndefined();
    }
  });

  it("ends failed, not succeeded, when its sender lost every device before one was called", async () => {
    const blocker = await fleetOf("blocking-fleet", 1);
    const { fleet, devices } = await fleetOf("lost-fleet", 2);
    // One lane at a time in this instance: while the blocking job's device is called, the second
    // job is sent and its devices move away, before its lane can claim any of them.
    let second: number | undefined;
    atFirstCall = async () => {
      const sent = await submit("/v1/blink", { appId: fleet }, bearer(world.creds.alice));
      expect(sent.statusCode, sent.body).toBe(202);
      second = (JSON.parse(sent.body) as Job).id;
      await moveToOrganizationB(devices);
    };
    const response = await submit("/v1/blink", { appId: blocker.fleet }, bearer(world.creds.alice));
    expect(response.statusCode, response.body).toBe(202);
    expect(await finishedJob((JSON.parse(response.body) as Job).id)).toMatchObject({ status: "succeeded" });
    expect(second).toBeDefined();
    const job = await finishedJob(second as number);
    expect(job).toMatchObject({
      status: "failed",
      targeted_count: 2,
      done_count: 2,
      ok_count: 0,
      failed_count: 0,
      skipped_count: 2,
      pending_count: 0,
    });
    for (const lost of devices) {
      expect(resultOf(job, lost)).toMatchObject({ status: "skipped", error: "forbidden" });
      expect(calls.get(lost)).toBeUndefined();
    }
    // GraphQL's CommandJob says the same.
    const read = await graphql<{ commandJob: unknown }>(
      server,
      `{ commandJob(id: ${second}) { status okCount failedCount skippedCount doneCount } }`,
    );
    expect(read.data?.commandJob).toEqual({
      status: "failed",
      okCount: 0,
      failedCount: 0,
      skippedCount: 2,
      doneCount: 2,
    });
  });

  it("counts each device refused without a call as failed, and no job of such devices succeeds", async () => {
    const { fleet, devices } = await fleetOf("refused-fleet", 4);
    const [answers, tooOld, noAddress, outside] = devices as [number, number, number, number];
    // As their state reports leave them: a supervisor older than the endpoint (/v1/blink: 1.1.0), no
    // address reported, an address outside PROXY_ALLOWED_NETWORKS (loopback and private by default).
    for (const [device, change] of [
      [tooOld, `"supervisor_version" = '1.0.0'`],
      [noAddress, `"supervisor_api_address" = NULL`],
      [outside, `"supervisor_api_address" = '192.0.2.10'`],
    ] as const) {
      await server.test.db.query({
        text: `UPDATE "device" SET ${change} WHERE "id" = $1::int4`,
        values: [device],
      });
    }
    const all = await submit("/v1/blink", { appId: fleet }, bearer(world.creds.alice));
    expect(all.statusCode, all.body).toBe(202);
    const job = await finishedJob((JSON.parse(all.body) as Job).id);
    expect(job).toMatchObject({ status: "partially_failed", done_count: 4, ok_count: 1, failed_count: 3 });
    expect(resultOf(job, answers)).toMatchObject({ status: "ok" });
    expect(resultOf(job, tooOld)).toMatchObject({ status: "failed", status_code: 501 });
    expect(resultOf(job, noAddress)).toMatchObject({ status: "failed", status_code: 502 });
    expect(resultOf(job, outside)).toMatchObject({ status: "failed", status_code: 502 });
    for (const refused of [tooOld, noAddress, outside]) expect(calls.get(refused)).toBeUndefined();
    // Without the device that answers: nothing was done.
    await admin("DELETE", `/v6/device(${answers})`);
    const none = await submit("/v1/blink", { appId: fleet }, bearer(world.creds.alice));
    expect(none.statusCode, none.body).toBe(202);
    const refusedJob = await finishedJob((JSON.parse(none.body) as Job).id);
    expect(refusedJob).toMatchObject({ status: "failed", done_count: 3, ok_count: 0, failed_count: 3 });
  });

  it.each([
    ["is deleted", "deleted", (user: number) => admin("DELETE", `/v6/user(${user})`)],
    [
      "leaves every organization",
      "leaver",
      // Their personal organization goes (it keeps its administrator while it exists), then the rest.
      async (user: number) => {
        const personal = await admin("DELETE", "/v6/organization?$filter=handle eq 'leaver'");
        expect(personal.statusCode, personal.body).toBe(200);
        return admin("DELETE", `/v6/organization_membership?$filter=user eq ${user}`);
      },
    ],
  ])("cancels the rest of a job whose sender %s", async (_case, name, remove) => {
    const { fleet, devices } = await fleetOf(`fleet-${name}`, 3);
    const sender = await memberOfA(name);
    atFirstCall = async () => {
      const removed = await remove(sender.id);
      expect(removed.statusCode, removed.body).toBe(200);
    };
    const response = await submit("/v1/blink", { appId: fleet }, bearer(sender.token));
    expect(response.statusCode, response.body).toBe(202);
    const job = await finishedJob((JSON.parse(response.body) as Job).id);
    expect(job).toMatchObject({
      status: "cancelled",
      done_count: 3,
      ok_count: 1,
      skipped_count: 2,
      pending_count: 0,
    });
    const skipped = job.command_result?.filter((result) => result.status === "skipped") ?? [];
    expect(skipped).toHaveLength(2);
    for (const result of skipped) expect(calls.get(result.device?.__id ?? 0)).toBeUndefined();
    expect(devices.filter((device) => calls.has(device))).toHaveLength(1);
  });

  describe("Idempotency-Key", () => {
    const alice = () => bearer(world.creds.alice);

    it("answers a retry with the same job after one of its devices moved away (not a 500)", async () => {
      const { fleet, devices } = await fleetOf("retried-fleet", 2);
      const headers = { ...alice(), "idempotency-key": "moved-1" };
      const first = await submit("/v1/blink", { appId: fleet }, headers);
      expect(first.statusCode, first.body).toBe(202);
      const job = JSON.parse(first.body) as Job;
      await finishedJob(job.id);
      await moveToOrganizationB(devices.slice(1));
      const retry = await submit("/v1/blink", { appId: fleet }, headers);
      expect(retry.statusCode, retry.body).toBe(202);
      expect(retry.headers.location).toBe(`/v6/command_job(${job.id})`);
      expect(JSON.parse(retry.body)).toMatchObject({ id: job.id, targeted_count: 2, ok_count: 2 });
    });

    it("refuses the same key with another body, path or method: 422 naming the header", async () => {
      const { fleet } = await fleetOf("keyed-fleet", 1);
      const headers = { ...alice(), "idempotency-key": "keyed-1" };
      const first = await submit("/v1/blink", { appId: fleet }, headers);
      expect(first.statusCode, first.body).toBe(202);
      for (const [path, body] of [
        ["/v1/blink", { appId: world.fleets.a1 }],
        ["/v1/blink", { appId: fleet, data: { force: true } }],
        ["/v1/update", { appId: fleet }],
        ["/v1/blink", { appId: fleet, method: "GET" }],
      ] as const) {
        const reused = await submit(path, body, headers);
        expect(reused.statusCode, `${path} ${JSON.stringify(body)}`).toBe(422);
        expect(JSON.parse(reused.body)).toBe("Idempotency-Key was already used for a different request");
      }
      // The key still stands for its first request.
      const retry = await submit("/v1/blink", { appId: fleet }, headers);
      expect(retry.statusCode).toBe(202);
      expect((JSON.parse(retry.body) as Job).id).toBe((JSON.parse(first.body) as Job).id);
    });

    it("behaves the same in GraphQL: idempotencyKey with another command is UNPROCESSABLE_CONTENT", async () => {
      const { fleet } = await fleetOf("graphql-keyed", 1);
      const send = (field: string) =>
        graphql<Record<string, { targets: number }>>(
          server,
          `mutation($appId: Int!) { ${field}(target: { appId: $appId }, async: true, idempotencyKey: "gql-keyed") { targets } }`,
          { appId: fleet },
          { authorization: `Bearer ${world.creds.alice}` },
        );
      const first = await send("supervisorBlink");
      expect(first.errors).toBeUndefined();
      expect(first.data?.supervisorBlink?.targets).toBe(1);
      expect((await send("supervisorBlink")).errors).toBeUndefined();
      const reused = await send("supervisorRegenerateApiKey");
      expect(reused.errors?.[0]).toMatchObject({
        message: "Idempotency-Key was already used for a different request",
        extensions: { code: "UNPROCESSABLE_CONTENT" },
      });
    });
  });
});
