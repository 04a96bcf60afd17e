import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyBox } from "../../../src/auth/key-box.ts";
import { loadDefaultCatalogue } from "../../../src/catalogue/defaults.ts";
import { recordOutcomes } from "../../../src/core/job-lifecycle/answer.ts";
import { claimResults, releaseClaims } from "../../../src/core/job-lifecycle/claim.ts";
import type { Executor } from "../../../src/db/database.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../../support/databases.ts";
import { type RunningServer, startServer } from "../../support/processes.ts";
import { startTestServer, type TestServer } from "../../support/server.ts";

// Issue 29: a job is a pipeline of per-device calls, not batches that wait for their slowest
// device. Its lanes keep COMMAND_JOB_CONCURRENCY devices in flight over every instance, claiming
// the next device as each answers; answers are written in bulk, each device's once.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One loopback server standing in for every device's supervisor: it counts the calls in flight
 * (and the most at once), each device's calls (by the number in its key), and when each answered.
 * A device whose key is in `slow` answers after `slowMs`, the others after `fastMs`.
 */
function standIn(fastMs: number, slowMs: number, slow: ReadonlySet<number>) {
  const state = {
    inFlight: 0,
    most: 0,
    calls: new Map<number, number>(),
    answered: new Map<number, number>(),
  };
  const server = createServer((request, response) => {
    const key = new URL(request.url ?? "/", "http://x").searchParams.get("apikey") ?? "";
    const n = Number(key.replace("key-", ""));
    state.calls.set(n, (state.calls.get(n) ?? 0) + 1);
    state.inFlight++;
    state.most = Math.max(state.most, state.inFlight);
    setTimeout(
      () => {
        state.inFlight--;
        state.answered.set(n, Date.now());
        response.setHeader("content-type", "application/json");
        response.end(JSON.stringify({ device: n }));
      },
      slow.has(n) ? slowMs : fastMs,
    );
  });
  return { server, state };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as { port: number }).port;
}

/** `count` online devices of the fleet, written as their state reports leave them; keys key-1…key-<count>. */
async function addDevices(db: Executor, fleet: number, count: number, port: number, box: KeyBox) {
  await db.query({
    text: `WITH made AS (
             INSERT INTO "actor" ("id")
             SELECT nextval(pg_get_serial_sequence('actor', 'id')) FROM generate_series(1, $1::int4)
             RETURNING "id"),
           numbered AS (SELECT "id", row_number() OVER (ORDER BY "id") AS n FROM made)
           INSERT INTO "device" ("belongs_to__application", "actor", "device_name", "is_of__device_type", "uuid",
             "is_online", "supervisor_api_address", "supervisor_api_port", "supervisor_api_key_ciphertext",
             "supervisor_version")
           SELECT $2::int4, numbered."id", 'pipeline-' || n, a."is_for__device_type", md5($2::int4 || '-' || n), true,
             '127.0.0.1', $3::int4, ($4::text[])[n], '17.0.0'
           FROM numbered, "application" a WHERE a."id" = $2::int4`,
    values: [count, fleet, port, Array.from({ length: count }, (_, n) => box.seal(`key-${n + 1}`))],
  });
}

interface ResultRow {
  devices: number;
  rows: number;
  finished: number;
  ok: number;
  once: number;
}

const resultsOf = async (db: Executor, job: number) =>
  (
    await db.query<ResultRow>({
      text: `SELECT count(DISTINCT "device")::int4 AS devices, count(*)::int4 AS rows,
               count(*) FILTER (WHERE "finished_at" IS NOT NULL)::int4 AS finished,
               count(*) FILTER (WHERE "status" = 'ok')::int4 AS ok,
               count(*) FILTER (WHERE "attempts" = 1)::int4 AS once
             FROM "command_result" WHERE "command_job" = $1::int4`,
      values: [job],
    })
  )[0];

async function finishedJob(db: Executor, job: number, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await db.query<{ status: string; done_count: number; ok_count: number; finished: boolean }>(
      {
        text: `SELECT "status", "done_count", "ok_count", "finished_at" IS NOT NULL AS finished
             FROM "command_job" WHERE "id" = $1::int4`,
        values: [job],
      },
    );
    if (row?.finished) return row;
    if (Date.now() > deadline) throw new Error(`job ${job} did not finish: ${JSON.stringify(row)}`);
    await sleep(100);
  }
}

describe.each(databaseKinds)("the job pipeline on %s", (kind) => {
  const FAST = 50;
  const SLOW_MS = 3_000;
  let server: TestServer;
  let fleet: number;
  const { server: supervisor, state } = standIn(20, SLOW_MS, new Set([1]));

  beforeAll(async () => {
    server = await startTestServer(kind, {
      PROXY_TIMEOUT_MS: "10000",
      // One lane of six devices: the slow device's own lane has to go on without it.
      COMMAND_JOB_CONCURRENCY: "6",
      COMMAND_JOB_BATCH_SIZE: "6",
      COMMAND_JOB_INSTANCE_CONCURRENCY: "6",
      COMMAND_JOB_POLL_INTERVAL: "0.5",
      COMMAND_JOB_SUPERVISE_INTERVAL: "1",
    });
    await loadDefaultCatalogue(server.test.db);
    const port = await listen(supervisor);
    const organization = await server.app.inject({
      method: "POST",
      url: "/v6/organization",
      payload: { name: "pipeline" },
    });
    const made = await server.app.inject({
      method: "POST",
      url: "/v6/application",
      payload: {
        app_name: "pipeline",
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
    // Device 1 (the job's first) is slow; the other FAST answer at once.
    await addDevices(server.test.db, fleet, 1 + FAST, port, new KeyBox(secret?.value ?? ""));
  }, 180_000);
  afterAll(async () => {
    await new Promise((resolve) => supervisor.close(resolve));
    await server?.close();
  });

  it("does not let a slow device hold back the others, keeps to the job's limit and records each device once", async () => {
    const submitted = await server.app.inject({
      method: "POST",
      url: "/supervisor/v1/blink",
      headers: { prefer: "respond-async", "content-type": "application/json" },
      payload: JSON.stringify({ appId: fleet }),
    });
    expect(submitted.statusCode, submitted.body).toBe(202);
    const job = JSON.parse(submitted.body) as { id: number };
    const done = await finishedJob(server.test.db, job.id);
    expect(done).toMatchObject({ status: "succeeded", done_count: 1 + FAST, ok_count: 1 + FAST });

    // The fast devices all answered while the slow one was still being called: its lane went on
    // with its other five slots. (Batches of six would have waited for it.)
    const slowAnswered = state.answered.get(1) ?? 0;
    const lastFast = Math.max(...[...state.answered].filter(([n]) => n !== 1).map(([, at]) => at));
    expect(state.answered.size).toBe(1 + FAST);
    expect(lastFast).toBeLessThan(slowAnswered - 500);
    // Never more than the job's six at once.
    expect(state.most).toBeLessThanOrEqual(6);
    expect(state.most).toBeGreaterThan(3);
    // Each device was called once and has one result, written once.
    expect([...state.calls.values()].every((calls) => calls === 1)).toBe(true);
    expect(await resultsOf(server.test.db, job.id)).toEqual({
      devices: 1 + FAST,
      rows: 1 + FAST,
      finished: 1 + FAST,
      ok: 1 + FAST,
      once: 1 + FAST,
    });
  }, 90_000);
});

describe.each(databaseKinds)("a device waiting for a slot on %s", (kind) => {
  let server: TestServer;
  const { server: supervisor, state } = standIn(20, 3_000, new Set([1, 2]));

  beforeAll(async () => {
    // One lane of two: the first two devices (slow) hold both slots; the third, claimed and checked
    // with them, waits.
    server = await startTestServer(kind, {
      PROXY_TIMEOUT_MS: "10000",
      COMMAND_JOB_CONCURRENCY: "2",
      COMMAND_JOB_BATCH_SIZE: "2",
      COMMAND_JOB_INSTANCE_CONCURRENCY: "2",
      COMMAND_JOB_POLL_INTERVAL: "0.5",
      COMMAND_JOB_SUPERVISE_INTERVAL: "1",
    });
    await loadDefaultCatalogue(server.test.db);
  }, 180_000);
  afterAll(async () => {
    await new Promise((resolve) => supervisor.close(resolve));
    await server?.close();
  });

  const admin = async (method: "POST" | "PATCH", url: string, payload: object) => {
    const response = await server.app.inject({ method, url, payload });
    expect(response.statusCode, response.body).toBeLessThan(300);
    return JSON.parse(response.body);
  };

  it("is read again before it is called when its check got old: one its sender lost meanwhile is skipped", async () => {
    const port = await listen(supervisor);
    const ours = await admin("POST", "/v6/organization", { name: "ours" });
    const theirs = await admin("POST", "/v6/organization", { name: "theirs" });
    const fleet = async (organization: number, name: string) =>
      (
        await admin("POST", "/v6/application", {
          app_name: name,
          device_type: "raspberrypi4-64",
          organization,
        })
      ).id as number;
    const mine = await fleet(ours.id, "waiting-ours");
    const elsewhere = await fleet(theirs.id, "waiting-theirs");
    const [secret] = await server.test.db.query<{ value: string }>({
      text: `SELECT "value" FROM "setting" WHERE "name" = 'supervisor_key_secret'`,
      values: [],
    });
    await addDevices(server.test.db, mine, 3, port, new KeyBox(secret?.value ?? ""));
    const devices = await server.test.db.query<{ id: number }>({
      text: `SELECT "id" FROM "device" WHERE "belongs_to__application" = $1::int4 ORDER BY "id"`,
      values: [mine],
    });
    const user = await admin("POST", "/v6/user", {
      username: "waiter",
      email: "waiter@example.com",
      password: "password-waiter",
    });
    await admin("POST", "/v6/organization_membership", {
      user: user.id,
      is_member_of__organization: ours.id,
      role: "member",
    });
    const login = await server.app.inject({
      method: "POST",
      url: "/login_",
      headers: { authorization: "", "content-type": "application/json" },
      payload: JSON.stringify({ username: "waiter", password: "password-waiter" }),
    });
    expect(login.statusCode, login.body).toBe(200);

    const submitted = await server.app.inject({
      method: "POST",
      url: "/supervisor/v1/blink",
      headers: {
        prefer: "respond-async",
        "content-type": "application/json",
        authorization: `Bearer ${login.body}`,
      },
      payload: JSON.stringify({ appId: mine }),
    });
    expect(submitted.statusCode, submitted.body).toBe(202);
    // Both slow devices are being called, the third waits: it moves to another organization's fleet.
    const deadline = Date.now() + 20_000;
    while (state.inFlight < 2) {
      if (Date.now() > deadline) throw new Error("the slow devices were not called");
      await sleep(20);
    }
    await admin("PATCH", `/v6/device(${devices[2]?.id})`, { belongs_to__application: elsewhere });
    const job = JSON.parse(submitted.body) as { id: number };
    const done = await finishedJob(server.test.db, job.id);
    expect(done).toMatchObject({ done_count: 3, ok_count: 2 });
    const [lost] = await server.test.db.query<{ status: string; error: string | null }>({
      text: `SELECT "status", "error" FROM "command_result" WHERE "command_job" = $1::int4 AND "device" = $2::int4`,
      values: [job.id, devices[2]?.id],
    });
    expect(lost).toEqual({ status: "skipped", error: "forbidden" });
    expect(state.calls.get(3)).toBeUndefined();
  }, 60_000);
});

describe.each(databaseKinds)("claims and bulk writes on %s", (kind) => {
  let test: TestDatabase;
  let job: number;
  beforeAll(async () => {
    test = await freshDatabase(kind);
    const [made] = await test.db.query<{ id: number }>({
      text: `INSERT INTO "command_job" ("is_issued_by__actor", "method", "path", "target", "targeted_count", "pending_count")
             VALUES (1, 'POST', '/v1/blink', '{}', 5, 5) RETURNING "id"`,
      values: [],
    });
    job = made?.id as number;
    await test.db.query({
      text: `INSERT INTO "command_result" ("command_job") SELECT $1::int4 FROM generate_series(1, 5)`,
      values: [job],
    });
  }, 60_000);
  afterAll(() => test?.drop());

  const ok = (id: number) => ({ id, status: "ok" as const, statusCode: 200, body: { id }, error: undefined });

  it("claims each device once while its lease holds, records each once, and takes over an ended lease", async () => {
    const first = await claimResults(test.db, job, 3, 60);
    const second = await claimResults(test.db, job, 3, 60);
    expect(first.claimed.map((claim) => claim.attempts)).toEqual([1, 1, 1]);
    expect(second.claimed).toHaveLength(2);
    // Leased: nothing left to claim.
    expect((await claimResults(test.db, job, 5, 60)).claimed).toEqual([]);

    const [a, b, c] = first.claimed.map((claim) => claim.id) as [number, number, number];
    const outcomes = [
      ok(a),
      { ...ok(b), status: "failed" as const, statusCode: 502, retryAfterSeconds: 60 },
      ok(c),
    ];
    const written = await test.db.transaction((tx) => recordOutcomes(tx, job, outcomes));
    expect(written).toEqual({ ok: 2, failed: 0, skipped: 0 });
    // The same outcomes again (a device called twice, its first worker dead): nothing changes.
    const again = await test.db.transaction((tx) => recordOutcomes(tx, job, [ok(a), ok(c)]));
    expect(again).toEqual({ ok: 0, failed: 0, skipped: 0 });
    // The retry waits for its backoff; the second claim, given back uncalled, is pending at once.
    await releaseClaims(
      test.db,
      job,
      second.claimed.map((claim) => claim.id),
    );
    const released = await claimResults(test.db, job, 5, 0);
    expect(released.claimed.map((claim) => [claim.id, claim.attempts])).toEqual(
      second.claimed.map((claim) => [claim.id, 1]),
    );
    // Leased for no time (their worker died): taken over, one attempt more.
    const taken = await claimResults(test.db, job, 5, 60);
    expect(taken.claimed.map((claim) => [claim.id, claim.attempts])).toEqual(
      second.claimed.map((claim) => [claim.id, 2]),
    );
    const rows = await test.db.query<{ id: number; status: string; finished: boolean; body: unknown }>({
      text: `SELECT "id", "status", "finished_at" IS NOT NULL AS finished, "body" FROM "command_result"
             WHERE "command_job" = $1::int4 ORDER BY "id"`,
      values: [job],
    });
    expect(rows.slice(0, 3)).toEqual([
      { id: a, status: "ok", finished: true, body: { id: a } },
      { id: b, status: "pending", finished: false, body: null },
      { id: c, status: "ok", finished: true, body: { id: c } },
    ]);
  });

  it("claims past a lane's last claim when told it, and from the job's start when not", async () => {
    const [other] = await test.db.query<{ id: number }>({
      text: `INSERT INTO "command_job" ("is_issued_by__actor", "method", "path", "target", "targeted_count", "pending_count")
             VALUES (1, 'POST', '/v1/blink', '{}', 6, 6) RETURNING "id"`,
      values: [],
    });
    const id = other?.id as number;
    await test.db.query({
      text: `INSERT INTO "command_result" ("command_job") SELECT $1::int4 FROM generate_series(1, 6)`,
      values: [id],
    });
    const ids = (claims: { claimed: readonly { id: number }[] }) => claims.claimed.map((claim) => claim.id);
    const first = ids(await claimResults(test.db, id, 2, 60));
    const next = ids(await claimResults(test.db, id, 2, 60, first.at(-1)));
    expect(next).toHaveLength(2);
    expect(next.every((each) => each > (first.at(-1) as number))).toBe(true);
    // The first two given back: a claim past the last one does not see them; one from the start does.
    await releaseClaims(test.db, id, first);
    expect(ids(await claimResults(test.db, id, 6, 60, next.at(-1)))).toHaveLength(2);
    expect(ids(await claimResults(test.db, id, 6, 60))).toEqual(first);
  });
});

describe.skipIf(!databaseKinds.includes("postgres"))("a job shared by two instances", () => {
  const DEVICES = 1_200;
  const SECRET = "pipeline-test-supervisor-key-secret-0123456789";
  let test: TestDatabase;
  const instances: RunningServer[] = [];
  const { server: supervisor, state } = standIn(30, 30, new Set());
  let port: number;
  let token: string;
  let organization: number;

  const api = async (method: string, path: string, body: unknown, headers = {}) => {
    const response = await fetch(`${instances[1]?.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };

  /** A new fleet of DEVICES devices, and a job to all of them; the stand-in's counts start afresh. */
  async function submitToNewFleet(name: string): Promise<number> {
    const made = await api("POST", "/v6/application", {
      app_name: name,
      device_type: "raspberrypi4-64",
      organization,
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    await addDevices(test.db, made.body.id, DEVICES, port, new KeyBox(SECRET));
    Object.assign(state, { most: 0 });
    state.calls.clear();
    const submitted = await api(
      "POST",
      "/supervisor/v1/blink",
      { appId: made.body.id },
      { prefer: "respond-async" },
    );
    expect(submitted.status).toBe(202);
    return submitted.body.id;
  }

  beforeAll(async () => {
    test = await freshDatabase("postgres");
    port = await listen(supervisor);
    const env = {
      DATABASE_URL: test.url as string,
      SUPERVISOR_KEY_SECRET: SECRET,
      ADMIN_PASSWORD: "pipeline-admin",
      PROXY_TIMEOUT_MS: "5000",
      // Three lanes of two; an instance runs two lanes (four devices) at most, so the job reaches
      // its six only on both instances, and the two could run eight.
      COMMAND_JOB_CONCURRENCY: "6",
      COMMAND_JOB_BATCH_SIZE: "2",
      COMMAND_JOB_INSTANCE_CONCURRENCY: "4",
      COMMAND_JOB_SUPERVISE_INTERVAL: "1",
      COMMAND_JOB_POLL_INTERVAL: "0.5",
    };
    instances.push(await startServer(env), await startServer(env));
    const login = await fetch(`${instances[1]?.url}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: "pipeline-admin" }),
    });
    expect(login.status).toBe(200);
    token = await login.text();
    organization = (await api("POST", "/v6/organization", { name: "shared" })).body.id;
  }, 120_000);
  afterAll(async () => {
    for (const instance of instances) {
      if (instance.child.exitCode === null && instance.child.signalCode === null) await instance.stop();
    }
    await new Promise((resolve) => supervisor.close(resolve));
    await test?.drop();
  });

  it("never has more of the job's devices in flight than COMMAND_JOB_CONCURRENCY", async () => {
    const job = await submitToNewFleet("shared");
    const done = await finishedJob(test.db, job, 120_000);
    expect(done).toMatchObject({ status: "succeeded", done_count: DEVICES, ok_count: DEVICES });
    // More than one instance can run (four): both ran the job's lanes at once, and never more
    // than its six devices.
    expect(state.most).toBeLessThanOrEqual(6);
    expect(state.most).toBeGreaterThanOrEqual(5);
    expect(state.calls.size).toBe(DEVICES);
    expect([...state.calls.values()].every((calls) => calls === 1)).toBe(true);
    expect(await resultsOf(test.db, job)).toEqual({
      devices: DEVICES,
      rows: DEVICES,
      finished: DEVICES,
      ok: DEVICES,
      once: DEVICES,
    });
    // Its first lane wrote its 1,200 results (over the 1,000 written at submission) and analyzed
    // the table, so the job's statements were planned for its size, not the empty table's.
    // last_analyze is set by an ANALYZE statement only, never by autovacuum.
    const analyzed = Date.now() + 5_000;
    let last: Date | null = null;
    while (last === null && Date.now() < analyzed) {
      const [row] = await test.db.query<{ last: Date | null }>({
        text: `SELECT pg_stat_get_last_analyze_time('"command_result"'::regclass) AS last`,
        values: [],
      });
      last = row?.last ?? null;
      if (last === null) await sleep(200);
    }
    expect(last).not.toBeNull();
  }, 180_000);

  it("analyzes the results table only when a job adds a tenth or more of the rows its statistics know", async () => {
    const analyses = async () => {
      const [row] = await test.db.query<{ count: string }>({
        text: `SELECT pg_stat_get_analyze_count('"command_result"'::regclass) AS count`,
        values: [],
      });
      return Number(row?.count);
    };
    // An earlier job's 15,000 results, counted by the statistics: a new job's 1,200 barely move them.
    const [earlier] = await test.db.query<{ id: number }>({
      text: `INSERT INTO command_job (is_issued_by__actor, method, path, target, status, finished_at)
             SELECT actor, 'POST', '/v1/blink', '{}', 'succeeded', now() FROM "user" WHERE username = 'admin'
             RETURNING id`,
      values: [],
    });
    await test.db.query({
      text: `INSERT INTO command_result (command_job, status, finished_at)
             SELECT $1::int4, 'ok', now() FROM generate_series(1, 15000)`,
      values: [earlier?.id],
    });
    await test.db.query({ text: `ANALYZE "command_result"`, values: [] });
    const before = await analyses();
    const job = await submitToNewFleet("shared-again");
    const done = await finishedJob(test.db, job, 120_000);
    expect(done).toMatchObject({ status: "succeeded", done_count: DEVICES, ok_count: DEVICES });
    expect(await analyses()).toBe(before);
  }, 180_000);

  it("hands a stopping instance's lanes over: no device waits for a lease, none is called twice", async () => {
    const job = await submitToNewFleet("handed-over");
    const midway = Date.now() + 60_000;
    for (;;) {
      const [row] = await test.db.query<{ done: number }>({
        text: `SELECT "done_count" AS done FROM "command_job" WHERE "id" = $1::int4`,
        values: [job],
      });
      if ((row?.done ?? 0) >= DEVICES / 4) break;
      if (Date.now() > midway) throw new Error("the job did not progress");
      await sleep(20);
    }
    // SIGTERM: its lanes stop claiming, their devices in flight answer and are recorded, the ones
    // waiting for a slot are given back, and each lane queues a successor.
    expect(await instances[0]?.stop()).toBe(0);
    const done = await finishedJob(test.db, job, 120_000);
    expect(done).toMatchObject({ status: "succeeded", done_count: DEVICES, ok_count: DEVICES });
    // No claim was taken over after its lease (that would be a second attempt): each device was
    // called once.
    expect(state.calls.size).toBe(DEVICES);
    expect([...state.calls.values()].every((calls) => calls === 1)).toBe(true);
    expect(await resultsOf(test.db, job)).toMatchObject({ rows: DEVICES, finished: DEVICES, once: DEVICES });
  }, 180_000);
});
