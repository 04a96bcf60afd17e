import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CURRENT_SUPERVISOR_VERSION } from "../../src/supervisor/versions.ts";
import { graphql } from "../support/graphql/graphql.ts";
import { makeUser } from "../support/graphql/graphql-writes.ts";
import { OLD_VERSION, type ProxiedFleets, startProxiedFleets } from "../support/graphql/supervisor-fleets.ts";
import type { TestServer } from "../support/server.ts";
import type { FleetDevice } from "../support/supervisor/fleet.ts";

// Remote control through GraphQL against real `fleetgate fleet` devices (supervisor-fleets.ts): every
// supervisor mutation and query, partial failures, targeting, app-scoped commands, access and the audit.

interface DeviceResult {
  deviceId: number;
  uuid: string;
  statusCode: number;
  ok: boolean;
  body: unknown;
  error: string | null;
}
interface SupervisorResult {
  targets: number;
  succeeded: number;
  failed: number;
  results: DeviceResult[];
}
interface Target {
  uuid?: string;
  deviceId?: number;
  appId?: number;
}

const RESULT = "targets succeeded failed results { deviceId uuid statusCode ok body error }";

describe("GraphQL remote control against fleetgate fleet devices", () => {
  let world: ProxiedFleets;
  let server: TestServer;
  let apps: ProxiedFleets["apps"];
  let a: ProxiedFleets["a"];
  let b: ProxiedFleets["b"];
  beforeAll(async () => {
    world = await startProxiedFleets();
    ({ server, apps, a, b } = world);
  }, 150_000);
  afterAll(() => world?.close());

  const idOf = (device: FleetDevice) => world.idOf(device);
  const dirOf = (name: "a") => world.dirOf(name);

  async function run(
    operation: "query" | "mutation",
    field: string,
    target: Target,
    args = "",
    authorization?: string,
  ) {
    return graphql<Record<string, SupervisorResult>>(
      server,
      `${operation}($target: SupervisorTarget!) { ${field}(target: $target${args}) { ${RESULT} } }`,
      { target },
      authorization === undefined ? {} : { authorization },
    );
  }
  async function command(operation: "query" | "mutation", field: string, target: Target, args = "") {
    const reply = await run(operation, field, target, args);
    expect(reply.errors, JSON.stringify(reply.errors)).toBeUndefined();
    const result = reply.data?.[field] as SupervisorResult;
    // the counts agree with the results
    expect(result.targets).toBe(result.results.length);
    expect(result.succeeded).toBe(result.results.filter((r) => r.ok).length);
    expect(result.failed).toBe(result.targets - result.succeeded);
    return result;
  }
  const mutation = (field: string, target: Target, args = "") => command("mutation", field, target, args);
  const query = (field: string, target: Target) => command("query", field, target);
  async function refused(
    operation: "query" | "mutation",
    field: string,
    target: Target,
    code: string,
    message: RegExp,
    args = "",
    authorization?: string,
  ) {
    const reply = await run(operation, field, target, args, authorization);
    expect(reply.errors?.[0]?.extensions?.code, JSON.stringify(reply.errors)).toBe(code);
    expect(reply.errors?.[0]?.message).toMatch(message);
  }
  const only = (result: SupervisorResult) => {
    expect(result.targets).toBe(1);
    return result.results[0] as DeviceResult;
  };
  const byUuid = (result: SupervisorResult) => new Map(result.results.map((r) => [r.uuid, r]));

  it("targets one device by uuid or by deviceId, and the command reaches it", async () => {
    const [first] = a as [FleetDevice];
    const blink = await mutation("supervisorBlink", { uuid: first.uuid });
    expect(blink).toEqual({
      targets: 1,
      succeeded: 1,
      failed: 0,
      results: [
        { deviceId: idOf(first), uuid: first.uuid, statusCode: 200, ok: true, body: "OK", error: null },
      ],
    });
    const state = only(await query("supervisorDeviceState", { deviceId: idOf(first) }));
    expect(state).toMatchObject({
      deviceId: idOf(first),
      uuid: first.uuid,
      statusCode: 200,
      ok: true,
      error: null,
    });
    expect(state.body).toMatchObject({
      api_port: first.port,
      blinking: true,
      supervisor_version: CURRENT_SUPERVISOR_VERSION,
    });
  });

  it("each result's device is read in one batch (DataLoader): two statements for the whole fleet", async () => {
    const reply = await graphql<{
      supervisorPing: { results: { uuid: string; device: { uuid: string; isOnline: boolean } }[] };
    }>(
      server,
      `query($appId: Int) { supervisorPing(target: {appId: $appId}) { results { uuid device { uuid isOnline } } } }`,
      { appId: apps.a },
    );
    expect(reply.errors).toBeUndefined();
    const results = reply.data?.supervisorPing.results ?? [];
    expect(results).toHaveLength(a.length);
    for (const result of results) expect(result.device).toEqual({ uuid: result.uuid, isOnline: true });
    // The targets, then one read for every result's device.
    expect(reply.statements).toBe(2);
  });

  it("fans out by appId and ANDs the keys; no online device is NOT_FOUND, no key at all BAD_USER_INPUT", async () => {
    const all = await query("supervisorPing", { appId: apps.a });
    expect(all).toMatchObject({ targets: 3, succeeded: 3, failed: 0 });
    expect(new Set(all.results.map((r) => r.deviceId))).toEqual(new Set(a.map(idOf)));
    expect(all.results.every((r) => r.statusCode === 200 && r.body === "OK")).toBe(true);
    const [first, second] = a as [FleetDevice, FleetDevice];
    expect(only(await query("supervisorPing", { appId: apps.a, uuid: first.uuid })).uuid).toBe(first.uuid);
    expect(
      only(await query("supervisorPing", { appId: apps.a, deviceId: idOf(second), uuid: second.uuid })).uuid,
    ).toBe(second.uuid);
    await refused(
      "query",
      "supervisorPing",
      { appId: apps.b, uuid: first.uuid },
      "NOT_FOUND",
      /No online device/,
    );
    await refused(
      "query",
      "supervisorPing",
      { deviceId: idOf(second), uuid: first.uuid },
      "NOT_FOUND",
      /No online device/,
    );
    await refused("mutation", "supervisorBlink", { uuid: "f".repeat(32) }, "NOT_FOUND", /No online device/);
    const offline = await server.test.db.prisma.device.findFirstOrThrow({ where: { is_online: false } });
    await refused("mutation", "supervisorBlink", { uuid: offline.uuid }, "NOT_FOUND", /No online device/);
    await refused("mutation", "supervisorBlink", {}, "BAD_USER_INPUT", /At least one filter/);
  });

  it("partial failures: 200s from the reachable, 501 for a too-old supervisor, 504 for the slow, 502 for the unreachable", async () => {
    const ping = await query("supervisorPing", { appId: apps.b });
    expect(ping).toMatchObject({ targets: 4, succeeded: 2, failed: 2 });
    const pings = byUuid(ping);
    // /ping exists since 1.1.0: the old supervisor answers it
    expect(pings.get(b.old.uuid)).toMatchObject({
      deviceId: idOf(b.old),
      statusCode: 200,
      ok: true,
      body: "OK",
      error: null,
    });
    expect(pings.get(b.current.uuid)).toMatchObject({ statusCode: 200, ok: true });
    expect(pings.get(b.slow.uuid)).toMatchObject({
      statusCode: 504,
      ok: false,
      body: null,
      error: expect.stringMatching(/No answer within 2000 ms/),
    });
    expect(pings.get(b.gone.uuid)).toMatchObject({
      statusCode: 502,
      ok: false,
      body: null,
      error: expect.any(String),
    });

    const state = byUuid(await query("supervisorDeviceState", { appId: apps.b }));
    expect(state.get(b.old.uuid)).toMatchObject({
      statusCode: 501,
      ok: false,
      error: `Supervisor ${OLD_VERSION} predates /v1/device (needs 1.6.0 or later)`,
    });
    expect(state.get(b.current.uuid)).toMatchObject({
      statusCode: 200,
      ok: true,
      body: expect.objectContaining({ api_port: b.current.port }),
    });
    expect(state.get(b.slow.uuid)?.statusCode).toBe(504);
    expect(state.get(b.gone.uuid)?.statusCode).toBe(502);

    const healthy = await query("supervisorHealthy", { appId: apps.b });
    expect(healthy).toMatchObject({ targets: 4, succeeded: 1, failed: 3 });
    expect(byUuid(healthy).get(b.old.uuid)?.statusCode).toBe(501);
    expect((await query("supervisorHealthy", { appId: apps.a })).succeeded).toBe(3);
  });

  it("app-scoped commands send each device its own fleet's id", async () => {
    const [, second] = a as [FleetDevice, FleetDevice];
    // The device refuses another app id (401): a 200 shows it received its own.
    for (const [device, appId] of [
      [second, apps.a],
      [b.current, apps.b],
    ] as const) {
      expect(only(await mutation("supervisorRestart", { uuid: device.uuid }))).toMatchObject({
        statusCode: 200,
        ok: true,
        body: "OK",
      });
      const app = only(await query("supervisorApp", { deviceId: idOf(device) }));
      expect(app).toMatchObject({
        statusCode: 200,
        ok: true,
        body: expect.objectContaining({ appId }),
      });
      // Running again: the real /v1/apps/:appId does not say; /v1/device's status does.
      expect(only(await query("supervisorDeviceState", { uuid: device.uuid })).body).toMatchObject({
        status: "Idle",
      });
    }
    const purge = await mutation("supervisorPurge", { appId: apps.a });
    expect(purge).toMatchObject({ targets: 3, succeeded: 3, failed: 0 });
    expect(
      purge.results.every((r) => JSON.stringify(r.body) === JSON.stringify({ Data: "OK", Error: "" })),
    ).toBe(true);
    // fleet B in one command: the too-old supervisor lacks /v1/apps, the others answer for fleet B
    const apps_ = byUuid(await query("supervisorApp", { appId: apps.b }));
    expect(apps_.get(b.old.uuid)?.statusCode).toBe(501);
    expect(apps_.get(b.current.uuid)).toMatchObject({
      statusCode: 200,
      body: expect.objectContaining({ appId: apps.b }),
    });

    const stopped = only(await mutation("supervisorStopApp", { deviceId: idOf(second) }));
    expect(stopped).toMatchObject({ statusCode: 200, ok: true, body: { containerId: expect.any(String) } });
    expect(only(await query("supervisorDeviceState", { deviceId: idOf(second) })).body).toMatchObject({
      status: "exited",
    });
    expect(only(await mutation("supervisorStartApp", { deviceId: idOf(second) }))).toMatchObject({
      statusCode: 200,
      ok: true,
    });
    expect(only(await query("supervisorDeviceState", { deviceId: idOf(second) })).body).toMatchObject({
      status: "Idle",
    });
  });

  it("a held update lock: 423 without force, done with force", async () => {
    const [locked] = a as [FleetDevice];
    const lock = join(dirOf("a"), "0", "updates.lock");
    const device = await server.test.db.prisma.device.findFirstOrThrow({ where: { uuid: locked.uuid } });
    expect(device.id).toBe(idOf(locked));
    writeFileSync(lock, "");
    try {
      const refusedReboot = only(await mutation("supervisorReboot", { uuid: locked.uuid }));
      expect(refusedReboot).toMatchObject({
        statusCode: 423,
        ok: false,
        body: { Data: "", Error: expect.stringMatching(/Lockfile/) },
      });
      expect(
        only(await mutation("supervisorStopApp", { uuid: locked.uuid }, ", force: false")),
      ).toMatchObject({ statusCode: 423, ok: false });
      expect(
        only(
          await mutation(
            "supervisorSetHostConfig",
            { uuid: locked.uuid },
            `, config: {network: {hostname: "locked"}}`,
          ),
        ).statusCode,
      ).toBe(423);
      const forced = only(await mutation("supervisorReboot", { uuid: locked.uuid }, ", force: true"));
      expect(forced).toMatchObject({ statusCode: 202, ok: true, body: { Data: "OK", Error: null } });
      expect(only(await mutation("supervisorStopApp", { uuid: locked.uuid }, ", force: true"))).toMatchObject(
        { statusCode: 200, ok: true },
      );
      expect(only(await mutation("supervisorUpdate", { uuid: locked.uuid }, ", force: true"))).toMatchObject({
        statusCode: 204,
        ok: true,
        body: null,
      });
    } finally {
      rmSync(lock, { force: true });
    }
    expect(only(await mutation("supervisorStartApp", { uuid: locked.uuid }))).toMatchObject({
      statusCode: 200,
      ok: true,
    });
  });

  it("supervisorSetHostConfig, then supervisorHostConfig reads it back", async () => {
    const [, second] = a as [FleetDevice, FleetDevice];
    const hostname = "gql-host-name";
    const set = only(
      await mutation(
        "supervisorSetHostConfig",
        { uuid: second.uuid },
        `, config: {network: {hostname: "${hostname}"}}`,
      ),
    );
    expect(set).toMatchObject({ statusCode: 200, ok: true, body: "OK" });
    const read = only(await query("supervisorHostConfig", { uuid: second.uuid }));
    expect(read).toMatchObject({ statusCode: 200, ok: true, body: { network: { hostname } } });
    const bad = only(
      await mutation("supervisorSetHostConfig", { uuid: second.uuid }, `, config: {network: {hostname: 5}}`),
    );
    // The device's own 400 (io-ts wording) comes back; an unknown member would be dropped there.
    expect(bad).toMatchObject({
      statusCode: 400,
      ok: false,
      body: expect.stringMatching(/network\.hostname/),
    });
    expect(only(await query("supervisorHostConfig", { uuid: second.uuid })).body).toMatchObject({
      network: { hostname },
    });
  });

  it("supervisorRequest passes path, method and data through; a bad path, method or data is BAD_USER_INPUT", async () => {
    const [first] = a as [FleetDevice];
    const request = (args: string) => mutation("supervisorRequest", { uuid: first.uuid }, args);
    const state = only(await request(`, path: "/v1/device", method: "GET"`));
    expect(state).toMatchObject({ statusCode: 200, body: expect.objectContaining({ api_port: first.port }) });
    expect(only(await request(`, path: "/v1/restart", data: {appId: ${apps.a}}`))).toMatchObject({
      statusCode: 200,
      ok: true,
      body: "OK",
    });
    expect(only(await request(`, path: "/v1/restart", data: {appId: ${apps.b}}`))).toMatchObject({
      statusCode: 401,
      ok: false,
    });
    expect(only(await request(`, path: "/v1/restart"`))).toMatchObject({
      statusCode: 400,
      ok: false,
      body: "Missing app id",
    });
    expect(only(await request(`, path: "/v1/no-such-endpoint", method: "get"`)).statusCode).toBe(404);
    for (const [args, message] of [
      [`, path: "/v1/../x"`, /Invalid supervisor path/],
      [`, path: "/v1/%3Fx"`, /Invalid supervisor path/],
      [`, path: "v1/blink"`, /Invalid supervisor path/],
      [`, path: "/v1/apps/:appId"`, /Invalid supervisor path/],
      [`, path: "/ping", method: "TRACE"`, /Unknown method 'TRACE'/],
      [`, path: "/v1/blink", data: [1]`, /'data' must be an object/],
    ] as const) {
      await refused("mutation", "supervisorRequest", { uuid: first.uuid }, "BAD_USER_INPUT", message, args);
    }
  });

  it("device and fleet keys are FORBIDDEN, no credential UNAUTHENTICATED; a user of another organization sees NOT_FOUND, public fleet or not", async () => {
    const [first] = a as [FleetDevice];
    const deviceKey = await server.app.inject({
      method: "POST",
      url: `/api-key/device/${idOf(first)}/device-key`,
    });
    expect(deviceKey.statusCode, deviceKey.body).toBe(200);
    const fleetKey = await server.app.inject({
      method: "POST",
      url: `/api-key/application/${apps.a}/provisioning`,
    });
    for (const key of [deviceKey.body, fleetKey.body].map((body) => JSON.parse(body) as string)) {
      await refused(
        "query",
        "supervisorPing",
        { uuid: first.uuid },
        "FORBIDDEN",
        /Only users/,
        "",
        `Bearer ${key}`,
      );
      await refused(
        "mutation",
        "supervisorBlink",
        { uuid: first.uuid },
        "FORBIDDEN",
        /Only users/,
        "",
        `Bearer ${key}`,
      );
    }
    await refused("mutation", "supervisorBlink", { uuid: first.uuid }, "UNAUTHENTICATED", /./, "", "");

    const reader = await makeUser(server, "gql-proxy-reader");
    const as = reader.authorization;
    await refused("query", "supervisorPing", { uuid: first.uuid }, "NOT_FOUND", /No online device/, "", as);
    await refused("mutation", "supervisorBlink", { appId: apps.a }, "NOT_FOUND", /No online device/, "", as);
    await server.test.db.prisma.application.update({ where: { id: apps.a }, data: { is_public: true } });
    try {
      // Issue 15: a public fleet shows its row and releases, never its devices' supervisors.
      await refused("query", "supervisorPing", { appId: apps.a }, "NOT_FOUND", /No online device/, "", as);
      await refused(
        "mutation",
        "supervisorBlink",
        { uuid: first.uuid },
        "NOT_FOUND",
        /No online device/,
        "",
        as,
      );
      await refused(
        "mutation",
        "supervisorRequest",
        { uuid: first.uuid },
        "NOT_FOUND",
        /No online device/,
        `, path: "/v1/blink"`,
        as,
      );
    } finally {
      await server.test.db.prisma.application.update({ where: { id: apps.a }, data: { is_public: false } });
    }
  });

  it("supervisorRegenerateApiKey: the device answers with its new key, and the cloud stores and uses it", async () => {
    const [, , third] = a as [FleetDevice, FleetDevice, FleetDevice];
    const sealedBefore = (
      await server.test.db.prisma.device.findFirstOrThrow({ where: { uuid: third.uuid } })
    ).supervisor_api_key_ciphertext;
    const result = only(await mutation("supervisorRegenerateApiKey", { uuid: third.uuid }));
    expect(result).toMatchObject({ statusCode: 200, ok: true });
    expect(result.body).toMatch(/^[0-9a-f]{32}$/);
    const deadline = Date.now() + 15_000;
    while (
      (await server.test.db.prisma.device.findFirstOrThrow({ where: { uuid: third.uuid } }))
        .supervisor_api_key_ciphertext === sealedBefore
    ) {
      if (Date.now() > deadline) throw new Error("the new key was not reported");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(only(await mutation("supervisorBlink", { uuid: third.uuid }))).toMatchObject({
      statusCode: 200,
      ok: true,
    });
  });

  it("supervisorShutdown: accepted (202), and the device stops answering", async () => {
    const [, , third] = a as [FleetDevice, FleetDevice, FleetDevice];
    expect(only(await mutation("supervisorShutdown", { uuid: third.uuid }, ", force: false"))).toMatchObject({
      statusCode: 202,
      ok: true,
    });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const ping = await run("query", "supervisorPing", { uuid: third.uuid });
      const result = ping.data?.supervisorPing?.results[0];
      if (ping.errors?.[0]?.extensions?.code === "NOT_FOUND" || (result && !result.ok)) break;
      if (Date.now() > deadline) throw new Error("the device still answers after its shutdown");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  });

  it("records every write command in supervisor_command (who, what, each device's result), and no read", async () => {
    const rows = await server.test.db.query<{
      is_issued_by__actor: number;
      method: string;
      path: string;
      data: unknown;
      results: { deviceId: number; uuid: string; statusCode: number; ok: boolean }[];
    }>({
      text: `SELECT "is_issued_by__actor", "method", "path", "data", "results" FROM "supervisor_command" ORDER BY "id"`,
      values: [],
    });
    const commands = rows.map((row) => `${row.method} ${row.path}`);
    expect(commands).toEqual(
      expect.arrayContaining([
        "POST /v1/blink",
        "POST /v1/restart",
        "POST /v1/purge",
        "POST /v1/reboot",
        "POST /v1/update",
        "POST /v1/shutdown",
        "POST /v1/regenerate-api-key",
        "POST /v1/apps/:appId/stop",
        "POST /v1/apps/:appId/start",
        "PATCH /v1/device/host-config",
      ]),
    );
    expect(rows.every((row) => row.method !== "GET")).toBe(true);
    // the admin sent them all: the reader's refused blink left no row
    const admin = await server.test.db.prisma.user.findUniqueOrThrow({ where: { username: "test-admin" } });
    expect(new Set(rows.map((row) => row.is_issued_by__actor))).toEqual(new Set([admin.actor]));
    const purge = rows.find((row) => row.path === "/v1/purge");
    expect(new Set(purge?.results.map((r) => r.deviceId))).toEqual(new Set(a.map(idOf)));
    expect(purge?.results.every((r) => r.ok && r.statusCode === 200)).toBe(true);
    const locked = rows.find((row) => row.path === "/v1/reboot");
    expect(locked?.results).toEqual([
      { deviceId: idOf(a[0] as FleetDevice), uuid: a[0]?.uuid, statusCode: 423, ok: false },
    ]);
    expect(rows.find((row) => row.method === "PATCH")?.data).toMatchObject({
      network: { hostname: expect.any(String) },
    });
  });
});
