import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyBox } from "../../src/auth/key-box.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { type FleetDevice, startFleet } from "../support/supervisor/fleet.ts";

describe("the cloud proxy: POST /supervisor/<path>", () => {
  let server: TestServer;
  let fleet: { child: ChildProcess; devices: FleetDevice[] };
  let ids: Map<string, number>;
  const base = mkdtempSync(join(tmpdir(), "fleetgate-proxy-"));
  beforeAll(async () => {
    server = await startTestServer("embedded", { PROXY_TIMEOUT_MS: "800" });
    await seedDemo(server.test.db);
    // A fleet of its own (application 4), so the demo devices (which never reported) stay out of it.
    const created = await server.app.inject({
      method: "POST",
      url: "/v6/application",
      payload: { app_name: "proxied", device_type: "raspberrypi4-64", organization: 1 },
    });
    const appId = JSON.parse(created.body).id;
    const key = JSON.parse(
      (await server.app.inject({ method: "POST", url: `/api-key/application/${appId}/provisioning` })).body,
    );
    fleet = await startFleet(
      [
        ...["--api", server.url, "--provisioning-key", key, "--fleet", String(appId), "--devices", "4"],
        ...[
          "--data-dir",
          base,
          "--heartbeat-interval",
          "1",
          "--poll-interval",
          "5",
          "--download-ms",
          "50",
          "--install-ms",
          "20",
        ],
      ],
      4,
    );
    const deadline = Date.now() + 30_000;
    for (;;) {
      const rows = await server.test.db.prisma.device.findMany({
        where: { belongs_to__application: appId, is_online: true, supervisor_api_port: { not: null } },
      });
      if (rows.length === 4) {
        ids = new Map(rows.map((row) => [row.uuid, row.id]));
        break;
      }
      if (Date.now() > deadline) throw new Error("devices did not report");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 120_000);
  afterAll(async () => {
    fleet?.child.kill("SIGTERM");
    await server?.close();
    rmSync(base, { recursive: true, force: true });
  });

  const send = (path: string, body: object, headers: Record<string, string> = {}) =>
    server.app.inject({ method: "POST", url: `/supervisor${path}`, payload: body, headers });
  const appIdOf = async () =>
    (await server.test.db.prisma.device.findFirstOrThrow({ where: { id: [...ids.values()][0] } }))
      .belongs_to__application;

  /** The n-th online demo device of fleet 1 (these never report). */
  const onlineDemoDevice = async (n: number) =>
    (
      await server.test.db.prisma.device.findMany({
        where: { is_online: true, belongs_to__application: 1 },
        orderBy: { id: "asc" },
      })
    )[n] ??
    (() => {
      throw new Error(`no online demo device ${n}`);
    })();

  it("targets one device by uuid and relays its answer as it is (POST by default)", async () => {
    const [device] = fleet.devices;
    const response = await send("/v1/blink", { uuid: device?.uuid });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe("OK");
  });

  it("targets by deviceId, passes method and data through", async () => {
    const [device] = fleet.devices;
    const id = ids.get(device?.uuid ?? "");
    const state = await send("/v1/device", { deviceId: id, method: "GET" });
    expect(state.statusCode).toBe(200);
    expect(JSON.parse(state.body)).toMatchObject({ api_port: device?.port, status: "Idle" });
    const appId = await appIdOf();
    const restart = await send("/v1/restart", { deviceId: id, data: { appId } });
    expect(restart.statusCode).toBe(200);
    expect(restart.body).toBe("OK");
    const missing = await send("/v1/restart", { deviceId: id, data: {} });
    expect(missing.statusCode).toBe(400);
  });

  it("fans out to a whole fleet by appId with 207, and ANDs the keys", async () => {
    const appId = await appIdOf();
    const response = await send("/ping", { appId, method: "GET" });
    expect(response.statusCode).toBe(207);
    const results = JSON.parse(response.body);
    expect(results).toHaveLength(4);
    expect(
      results.every(
        (result: { statusCode: number; body: string }) => result.statusCode === 200 && result.body === "OK",
      ),
    ).toBe(true);
    const [device] = fleet.devices;
    const both = await send("/ping", { appId, uuid: device?.uuid, method: "GET" });
    expect(both.statusCode).toBe(200);
    const none = await send("/ping", { appId: appId + 1000, uuid: device?.uuid, method: "GET" });
    expect(none.statusCode).toBe(404);
    expect(JSON.parse(none.body)).toBe("No online device(s) found");
  });

  it("relays a held update lock's 423 from the device itself", async () => {
    const [locked] = fleet.devices;
    writeFileSync(join(base, "0", "updates.lock"), "");
    try {
      const response = await send("/v1/reboot", { uuid: locked?.uuid, data: { force: false } });
      expect(response.statusCode).toBe(423);
      expect(JSON.parse(response.body)).toMatchObject({ Data: "", Error: expect.stringMatching(/Lockfile/) });
    } finally {
      rmSync(join(base, "0", "updates.lock"), { force: true });
    }
  });

  it("keeps answering for the others when some devices are slow (504) or unreachable (502)", async () => {
    // Demo devices of fleet 1 never report, so what the test makes them "report" stays as set.
    const slowServer = createServer((_request, response) => {
      setTimeout(() => response.end("late"), 2_000);
    });
    await new Promise<void>((resolve) => slowServer.listen(0, "127.0.0.1", resolve));
    const slowPort = (slowServer.address() as { port: number }).port;
    const [secret] = await server.test.db.query<{ value: string }>({
      text: `SELECT "value" FROM "setting" WHERE "name" = 'supervisor_key_secret'`,
      values: [],
    });
    const sealed = new KeyBox(secret?.value ?? "").seal("some-key");
    const slow = await onlineDemoDevice(1);
    const gone = await onlineDemoDevice(2);
    const reach = (id: number, port: number) =>
      server.test.db.query({
        text: `UPDATE "device" SET "supervisor_api_address" = '127.0.0.1', "supervisor_api_port" = $2::int4,
                 "supervisor_api_key_ciphertext" = $3::text WHERE "id" = $1::int4`,
        values: [id, port, sealed],
      });
    await reach(slow.id, slowPort);
    await reach(gone.id, 1);
    try {
      const response = await send("/ping", { appId: 1, method: "GET" });
      expect(response.statusCode).toBe(207);
      const byUuid = new Map<string, { statusCode: number; error?: string }>(
        JSON.parse(response.body).map((result: { uuid: string }) => [result.uuid, result]),
      );
      expect(byUuid.get(slow.uuid)).toMatchObject({
        statusCode: 504,
        error: expect.stringMatching(/No answer within 800 ms/),
      });
      expect(byUuid.get(gone.uuid)).toMatchObject({ statusCode: 502, error: expect.any(String) });
      // The others never said where they listen: a status of their own too, and the call still answers.
      expect([...byUuid.values()].filter((result) => result.statusCode === 502).length).toBeGreaterThan(1);
    } finally {
      slowServer.close();
      await server.test.db.query({
        text: `UPDATE "device" SET "supervisor_api_address" = NULL, "supervisor_api_port" = NULL,
                 "supervisor_api_key_ciphertext" = NULL WHERE "id" = ANY($1::int4[])`,
        values: [[slow.id, gone.id]],
      });
    }
  });

  it("skips offline devices, and says which device never told where it listens", async () => {
    // Demo devices never report: an offline one is not a target, an online one cannot be reached.
    const offline = await server.test.db.prisma.device.findFirstOrThrow({
      where: { is_online: false, belongs_to__application: 1 },
    });
    const online = await server.test.db.prisma.device.findFirstOrThrow({
      where: { is_online: true, belongs_to__application: 1 },
    });
    expect((await send("/ping", { uuid: offline.uuid, method: "GET" })).statusCode).toBe(404);
    const unreachable = await send("/ping", { uuid: online.uuid, method: "GET" });
    expect(unreachable.statusCode).toBe(502);
    expect(JSON.parse(unreachable.body)).toMatch(/has not reported where its supervisor listens/);
  });

  it("refuses addresses outside the allowed networks without calling them", async () => {
    // A demo device (online, never reporting, so no heartbeat rewrites what it "reported").
    const demo = await onlineDemoDevice(0);
    await server.test.db.query({
      text: `UPDATE "device" SET "supervisor_api_address" = '8.8.8.8', "supervisor_api_port" = 48484,
               "supervisor_api_key_ciphertext" = 'never-unsealed' WHERE "id" = $1::int4`,
      values: [demo.id],
    });
    const guarded = await send("/ping", { uuid: demo.uuid, method: "GET" });
    expect(guarded.statusCode).toBe(502);
    expect(JSON.parse(guarded.body)).toMatch(/outside the networks the proxy may call/);
  });

  it("refuses bad input with a 400 that names it, and device keys with a 401", async () => {
    expect(JSON.parse((await send("/ping", {})).body)).toBe("At least one filter must be specified");
    expect((await send("/ping", {})).statusCode).toBe(400);
    expect(JSON.parse((await send("/ping", { appId: "1" })).body)).toMatch(/'appId' must be an integer/);
    expect(JSON.parse((await send("/ping", { deviceId: 1.5 })).body)).toMatch(
      /'deviceId' must be an integer/,
    );
    expect(JSON.parse((await send("/ping", { appId: 1, method: "TRACE" })).body)).toMatch(
      /Unknown method 'TRACE'/,
    );
    expect(JSON.parse((await send("/ping", { appId: 1, data: [1] })).body)).toMatch(
      /'data' must be an object/,
    );
    // A raw `..` segment, as a raw HTTP client can send it (inject and fetch would normalise it away).
    const raw = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const { port } = new URL(server.url);
      const outgoing = httpRequest(
        {
          host: "127.0.0.1",
          port: Number(port),
          path: "/supervisor/v1/../x",
          method: "POST",
          headers: { authorization: `Bearer ${server.adminKey}`, "content-type": "application/json" },
        },
        (response) => {
          let body = "";
          response.on("data", (chunk) => {
            body += chunk;
          });
          response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      outgoing.on("error", reject);
      outgoing.end(JSON.stringify({ appId: 1 }));
    });
    expect(raw.status).toBe(400);
    expect(JSON.parse(raw.body)).toMatch(/Invalid supervisor path/);
    expect(JSON.parse((await send("/v1/%3Fx", { appId: 1 })).body)).toMatch(/Invalid supervisor path/);
    const [device] = fleet.devices;
    const deviceKeyAnswer = await send(
      "/ping",
      { uuid: device?.uuid },
      { authorization: `Bearer ${device?.apiKey}` },
    );
    expect(deviceKeyAnswer.statusCode).toBe(401);
  });

  it("reaches no device of another organization's fleet, public or not: 404, as for a device that does not exist", async () => {
    const appId = await appIdOf();
    const [device] = fleet.devices;
    const made = await server.app.inject({
      method: "POST",
      url: "/v6/user",
      payload: { username: "reader", email: "reader@example.com", password: "reader-password" },
    });
    expect(made.statusCode, made.body).toBe(201);
    const token = (
      await server.app.inject({
        method: "POST",
        url: "/login_",
        payload: { username: "reader", password: "reader-password" },
      })
    ).body;
    const asReader = { authorization: `Bearer ${token}` };
    const nowhere = await send("/v1/apps/1", { uuid: "0".repeat(32), method: "GET" }, asReader);
    expect(nowhere.statusCode).toBe(404);
    const probe = async () => [
      await send("/v1/apps/1", { uuid: device?.uuid, method: "GET" }, asReader),
      await send("/ping", { appId, method: "GET" }, asReader),
      await send("/v1/blink", { uuid: device?.uuid }, asReader),
    ];
    const answers = async () => (await probe()).map((r) => `${r.statusCode} ${r.body}`);
    const absent = `${nowhere.statusCode} ${nowhere.body}`;
    expect(await answers()).toEqual([absent, absent, absent]);
    // Issue 15: a public fleet shows its row and its releases, not its devices' supervisors (whose
    // answers carry their configuration and environment).
    await server.app.inject({
      method: "PATCH",
      url: `/v6/application(${appId})`,
      payload: { is_public: true },
    });
    try {
      expect(await answers()).toEqual([absent, absent, absent]);
    } finally {
      await server.app.inject({
        method: "PATCH",
        url: `/v6/application(${appId})`,
        payload: { is_public: false },
      });
    }
  });

  // The v2 device API goes through the proxy as v1 does: relayed as the device answers it.
  it("relays the v2 device API: app actions and device reads", async () => {
    const [device] = fleet.devices;
    const id = ids.get(device?.uuid ?? "");
    const appId = await appIdOf();
    const version = await send("/v2/version", { deviceId: id, method: "GET" });
    expect([version.statusCode, JSON.parse(version.body)]).toEqual([
      200,
      { status: "success", version: "17.1.4" },
    ]);
    // This fleet has no release yet: the device has no container to act on (404, its text relayed).
    const restart = await send(`/v2/applications/${appId}/restart-service`, {
      deviceId: id,
      data: { serviceName: "main" },
    });
    expect([restart.statusCode, restart.body]).toEqual([404, expect.stringMatching(/^App not found: /)]);
    const other = await send("/v2/applications/999999/restart", { deviceId: id });
    expect([other.statusCode, JSON.parse(other.body)]).toEqual([
      401,
      { status: "failed", message: "Unauthorized" },
    ]);
    const state = await send("/v2/state/status", { deviceId: id, method: "GET" });
    expect(JSON.parse(state.body)).toMatchObject({
      status: "success",
      containers: [],
      images: [],
      release: null,
    });
  });

  // docs/API.md's "Introduced in supervisor vX", one boundary per v2 part.
  it("does not send a v2 endpoint to a supervisor that predates it (501, naming the version)", async () => {
    const old = await onlineDemoDevice(2);
    const cases: [version: string, path: string, needs: string][] = [
      ["6.9.9", "/v2/applications/1/restart", "7.0.0"],
      ["7.11.9", "/v2/applications/state", "7.12.0"],
      ["7.11.9", "/v2/applications/1/state", "7.12.0"],
      ["7.20.0", "/v2/version", "7.21.0"],
      ["7.20.0", "/v2/local/target-state", "7.21.0"],
      ["8.5.9", "/v2/containerId", "8.6.0"],
      ["9.6.9", "/v2/state/status", "9.7.0"],
      ["9.10.9", "/v2/device/tags", "9.11.0"],
      ["9.99.0", "/v2/cleanup-volumes", "10.0.0"],
      ["10.1.9", "/v2/journal-logs", "10.2.0"],
      ["11.3.9", "/v2/device/vpn", "11.4.0"],
      // SemVer's order: a prerelease comes before its release.
      ["11.4.0-beta.1", "/v2/device/vpn", "11.4.0"],
    ];
    for (const [version, path, needs] of cases) {
      await server.test.db.query({
        text: `UPDATE "device" SET "supervisor_version" = $1 WHERE "id" = $2::int4`,
        values: [version, old.id],
      });
      const answer = await send(path, { uuid: old.uuid, method: "GET" });
      expect([answer.statusCode, JSON.parse(answer.body)]).toEqual([
        501,
        `Supervisor ${version} predates ${path} (needs ${needs} or later)`,
      ]);
    }
  });

  it("does not call a device whose supervisor predates the endpoint, and says so", async () => {
    // A demo device: no heartbeat rewrites the version it "reported".
    const old = await onlineDemoDevice(3);
    await server.test.db.query({
      text: `UPDATE "device" SET "supervisor_version" = '1.5.2' WHERE "id" = $1::int4`,
      values: [old.id],
    });
    const tooOld = await send("/v1/device", { uuid: old.uuid, method: "GET" });
    expect(tooOld.statusCode).toBe(501);
    expect(JSON.parse(tooOld.body)).toBe("Supervisor 1.5.2 predates /v1/device (needs 1.6.0 or later)");
    // /ping exists since 1.1.0: not refused for its version (this demo device just cannot be reached).
    const ping = await send("/ping", { uuid: old.uuid, method: "GET" });
    expect(ping.statusCode).toBe(502);
    expect(JSON.parse(ping.body)).toMatch(/has not reported where its supervisor listens/);
  });

  it("records every write command: who, which command, which devices, each result", async () => {
    const rows = await server.test.db.query<{
      method: string;
      path: string;
      results: { uuid: string; statusCode: number }[];
    }>({
      text: `SELECT "method", "path", "results" FROM "supervisor_command" ORDER BY "id"`,
      values: [],
    });
    expect(rows.map((row) => `${row.method} ${row.path}`)).toEqual(
      expect.arrayContaining(["POST /v1/blink", "POST /v1/restart", "POST /v1/reboot"]),
    );
    expect(rows.some((row) => row.path === "/ping")).toBe(false);
    const audit = await server.app.inject({
      method: "GET",
      url: "/v6/supervisor_command?$select=method,path",
    });
    expect(JSON.parse(audit.body).d.length).toBe(rows.length);
  });
});
