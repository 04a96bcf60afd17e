import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoLogin, seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { type Spawned, spawnFleetgate } from "../support/processes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Issue 31: the README's proxy example, as a newcomer runs it after the Quick start: the demo's
// devices are rows that no supervisor answers for (502 each, as the README says), and the example
// runs on simulated devices of `fleetgate fleet` in the fleet the Quick start made, whose
// provisioning key comes from the environment (FLEETGATE_PROVISIONING_KEY), and every one answers.

const DEVICES = 3;

interface DeviceResult {
  readonly deviceId: number;
  readonly statusCode: number;
  readonly body?: unknown;
}

describe.each(databaseKinds)("the README's proxy example on %s", { timeout: 180_000 }, (kind) => {
  const dir = mkdtempSync(join(tmpdir(), "fleetgate-proxy-example-"));
  let server: TestServer;
  let token: string;
  let fleet: number;
  let simulator: Spawned<string[]> | undefined;

  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  beforeAll(async () => {
    server = await startTestServer(kind, { PROXY_TIMEOUT_MS: "2000" });
    await seedDemo(server.test.db);
    const login = await fetch(`${server.url}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(demoLogin),
    });
    token = await login.text();
    const created = await call("POST", "/v6/application", {
      app_name: "my-fleet",
      device_type: "raspberrypi4-64",
    });
    expect(created.status).toBe(201);
    fleet = ((await created.json()) as { id: number }).id;
    const key = await call("POST", `/api-key/application/${fleet}/provisioning`);
    expect(key.status).toBe(200);
    const provisioningKey = (await key.json()) as string;
    simulator = await spawnFleetgate(
      [
        "fleet",
        "--api",
        server.url,
        "--fleet",
        String(fleet),
        "--devices",
        String(DEVICES),
        "--json",
        "--data-dir",
        dir,
      ],
      {
        what: "fleet simulator",
        timeoutMs: 90_000,
        env: { ...process.env, FLEETGATE_PROVISIONING_KEY: provisioningKey, FLEETGATE_TOKEN: "" },
        ready: (stdout) => {
          const lines = stdout.split("\n").filter((line) => line.startsWith("{"));
          return lines.length >= DEVICES ? lines : undefined;
        },
      },
    );
    // Registered and reported: online, with the address they listen at.
    const deadline = Date.now() + 60_000;
    for (let online = 0; online < DEVICES; await new Promise((resolve) => setTimeout(resolve, 500))) {
      if (Date.now() > deadline) throw new Error(`${online} of ${DEVICES} simulated devices came online`);
      const count = await call(
        "GET",
        `/v6/device/$count?$filter=belongs_to__application eq ${fleet} and is_online eq true`,
      );
      online = ((await count.json()) as { d: number }).d;
    }
  });
  afterAll(async () => {
    simulator?.child.kill("SIGTERM");
    await simulator?.exited;
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the demo's online devices answer 502: no supervisor listens for them", async () => {
    const [demoFleet] = await server.test.db.query<{ id: number }>({
      text: `SELECT "id" FROM "application" WHERE "app_name" = 'kiosks'`,
      values: [],
    });
    const answer = await call("POST", "/supervisor/v1/reboot", {
      appId: demoFleet?.id,
      data: { force: false },
    });
    expect(answer.status).toBe(207);
    const results = (await answer.json()) as DeviceResult[];
    expect(results.length).toBeGreaterThan(0);
    for (const result of results) expect(result.statusCode).toBe(502);
  });

  it("the simulated devices all answer the example, at once and as a job", async () => {
    const answer = await call("POST", "/supervisor/v1/reboot", { appId: fleet, data: { force: false } });
    expect(answer.status).toBe(207);
    const results = (await answer.json()) as DeviceResult[];
    expect(results).toHaveLength(DEVICES);
    for (const result of results)
      expect(result).toMatchObject({ statusCode: 202, body: { Data: "OK", Error: null } });

    const submitted = await call(
      "POST",
      "/supervisor/v1/reboot",
      { appId: fleet, data: { force: false } },
      { prefer: "respond-async", "idempotency-key": `reboot-fleet-${fleet}` },
    );
    expect(submitted.status).toBe(202);
    const job = (await submitted.json()) as { id: number; targeted_count: number };
    expect(job.targeted_count).toBe(DEVICES);
    await expect
      .poll(
        async () => {
          const read = await call("GET", `/v6/command_job(${job.id})?$select=status,ok_count`);
          return ((await read.json()) as { d: { status: string; ok_count: number }[] }).d[0];
        },
        { timeout: 60_000, interval: 500 },
      )
      .toEqual({ status: "succeeded", ok_count: DEVICES });
  });
});
