import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyBox } from "../../../src/auth/key-box.ts";
import { databaseKinds } from "../../support/databases.ts";
import { buildMatrixWorld, DEVICE_TYPE, type World } from "../../support/matrix/matrix-build.ts";
import { startTestServer, type TestServer } from "../../support/server.ts";

// Issue 45, item 3: whatever keeps a job's device from being called is counted, and a device its
// sender may no longer write is never called ("Later is now"). A claimed device that waits for one
// of the instance's slots (taken by other lanes' devices) longer than its check holds (2 s) is
// read again before it is called: one its sender lost meanwhile is skipped ("forbidden"). Three
// slots, lanes two devices wide: a first job's two devices and a second job's first device hold
// every slot on a stand-in supervisor that answers only when told, so the second job's other
// device waits for a slot, deterministically.

interface Job {
  id: number;
  status: string;
  ok_count: number;
  skipped_count: number;
  finished_at: string | null;
  command_result?: { device: { __id: number } | null; status: string; error: string | null }[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(databaseKinds)("a job's device that waited for a slot on %s", (kind) => {
  let server: TestServer;
  let world: World;
  let supervisor: Server;
  let port: number;
  let box: KeyBox;
  /** How often each device (by id) was called, and the answers held back, by device. */
  const calls = new Map<number, number>();
  const held = new Map<number, () => void>();
  /** Devices whose calls are held until released. */
  const holding = new Set<number>();

  beforeAll(async () => {
    server = await startTestServer(kind, {
      PROXY_TIMEOUT_MS: "20000",
      COMMAND_JOB_BATCH_SIZE: "2",
      COMMAND_JOB_CONCURRENCY: "2",
      COMMAND_JOB_INSTANCE_CONCURRENCY: "3",
      COMMAND_JOB_ATTEMPTS: "1",
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
        response.end(JSON.stringify({ device: id }));
      };
      if (holding.has(id)) held.set(id, answer);
      else answer();
    });
    await new Promise<void>((resolve) => supervisor.listen(0, "127.0.0.1", resolve));
    port = (supervisor.address() as { port: number }).port;
    const [secret] = await server.test.db.query<{ value: string }>({
      text: `SELECT "value" FROM "setting" WHERE "name" = 'supervisor_key_secret'`,
      values: [],
    });
    box = new KeyBox(secret?.value ?? "");
  }, 180_000);
  /** Answers the held calls of `devices` (every held call without). */
  const release = (devices: readonly number[] = [...held.keys()]) => {
    for (const device of devices) {
      const answer = held.get(device);
      held.delete(device);
      answer?.();
    }
  };
  afterAll(async () => {
    holding.clear();
    release();
    if (supervisor) await new Promise((resolve) => supervisor.close(resolve));
    await server?.close();
  });

  const admin = (method: "GET" | "POST" | "PATCH", url: string, payload?: object) =>
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
      await server.test.db.query({
        text: `UPDATE "device" SET "is_online" = true, "supervisor_api_address" = '127.0.0.1',
                 "supervisor_api_port" = $2::int4, "supervisor_api_key_ciphertext" = $3::text,
                 "supervisor_version" = '17.0.0' WHERE "id" = $1::int4`,
        values: [id, port, box.seal(`key-${id}`)],
      });
    }
    return { fleet, devices };
  }

  const submit = async (fleet: number): Promise<number> => {
    const response = await server.app.inject({
      method: "POST",
      url: "/supervisor/v1/blink",
      headers: {
        prefer: "respond-async",
        "content-type": "application/json",
        authorization: `Bearer ${world.creds.alice}`,
      },
      payload: JSON.stringify({ appId: fleet }),
    });
    expect(response.statusCode, response.body).toBe(202);
    return (JSON.parse(response.body) as Job).id;
  };

  async function until(what: string, done: () => boolean | Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`waited in vain for ${what}`);
      await sleep(50);
    }
  }

  const readJob = async (id: number) =>
    (JSON.parse((await admin("GET", `/v6/command_job(${id})?$expand=command_result`)).body) as { d: Job[] })
      .d[0] as Job;

  it("is read again before it is called, and skipped when its sender lost it meanwhile", async () => {
    const first = await fleetOf("slots-held", 2);
    const second = await fleetOf("slots-waiting", 2);
    const [calledAtOnce, waiter] = second.devices as [number, number];
    for (const device of [...first.devices, calledAtOnce]) holding.add(device);
    const firstJob = await submit(first.fleet);
    await until("the first job's devices to hold two slots", () => first.devices.every((d) => held.has(d)));
    const secondJob = await submit(second.fleet);
    // Its first device takes the last slot; the other one, checked with it, waits for a slot.
    await until("the second job's first device to hold the last slot", () => held.has(calledAtOnce));
    await sleep(200);
    const moved = await admin("PATCH", `/v6/device(${waiter})`, { belongs_to__application: world.fleets.b1 });
    expect(moved.statusCode, moved.body).toBe(200);
    // Longer than a check holds (lane.ts RECHECK_MS), then a slot frees.
    await sleep(2_500);
    holding.clear();
    release([calledAtOnce]);
    await until("the second job to finish", async () => (await readJob(secondJob)).finished_at !== null);
    release();
    await until("the first job to finish", async () => (await readJob(firstJob)).finished_at !== null);

    const job = await readJob(secondJob);
    expect(calls.get(waiter)).toBeUndefined();
    expect(job.command_result?.find((result) => result.device?.__id === waiter)).toMatchObject({
      status: "skipped",
      error: "forbidden",
    });
    expect(job).toMatchObject({ status: "partially_failed", ok_count: 1, skipped_count: 1 });
  }, 90_000);
});
