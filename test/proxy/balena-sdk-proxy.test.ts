import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { type Exchange, type LatestSDK, latestSdkVersion, loggedSdk } from "../support/sdk/balena-sdk.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { type FleetDevice, startFleet } from "../support/supervisor/fleet.ts";

// Acceptance (issues 9 and 19): the supervisor actions of balena-sdk 19.7.3 (on /v6/) and of the
// newest line (on /v7/), sent by a normal member of the organization, go through the cloud proxy
// to real `fleetgate fleet` devices. Both lines send the same proxy bodies. Each call's effect
// is checked on the device itself (its own supervisor API and data directory) and in the audit
// table; every request the SDK sends is logged with the server's answer, and a failing call
// reports that log, so a failure names the exact request.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await read();
    if (ok(last)) return last;
    if (Date.now() > deadline) throw new Error(`${what}: never happened; last seen ${JSON.stringify(last)}`);
    await sleep(50);
  }
}

interface DeviceState {
  api_port: number;
  commit: string | null;
  status: string;
  blinking: boolean;
  [key: string]: unknown;
}

interface AppInfo {
  appId: number;
  commit: string | null;
  containerId: string;
}

interface AuditRow {
  id: number;
  is_issued_by__actor: number;
  method: string;
  path: string;
  data: unknown;
  results: { deviceId: number; uuid: string; statusCode: number; ok: boolean; error?: string }[];
}

const lines = [
  { line: "balena-sdk 19.7.3", api: "v6" },
  { line: `balena-sdk ${latestSdkVersion}`, api: "v7" },
] as const;

describe.each(lines)(
  "$line supervisor actions through the cloud proxy, on fleetgate fleet devices",
  ({ api }) => {
    let server: TestServer;
    let fleet: { child: ChildProcess; devices: FleetDevice[] };
    let appId: number;
    let ids: Map<string, number>;
    // Typed as the newest line; 19.7.3 has the same supervisor calls with the same shapes.
    let sdk: LatestSDK;
    let log: Exchange[];
    let memberActor: number;
    const base = mkdtempSync(join(tmpdir(), "fleetgate-sdk-proxy-"));
    const DEVICES = 4;

    /** Runs one SDK call; on failure the error carries every request it sent and the answers. */
    async function call<T>(what: string, work: () => Promise<T>): Promise<T> {
      const from = log.length;
      try {
        return await work();
      } catch (error) {
        const exchanges = log
          .slice(from)
          .map((e) => `  ${e.request}\n    → ${e.response ?? "(no answer)"}`)
          .join("\n");
        throw new Error(
          `${what} failed: ${(error as Error).message}\nrequests:\n${exchanges || "  (none)"}`,
          {
            cause: error,
          },
        );
      }
    }

    /** The requests a call sent (and the call's result), for the assertions that name them. */
    async function traced<T>(
      what: string,
      work: () => Promise<T>,
    ): Promise<{ result: T; requests: string[] }> {
      const from = log.length;
      const result = await call(what, work);
      return { result, requests: log.slice(from).map((e) => e.request) };
    }

    const device = (index: number): FleetDevice => {
      const found = fleet.devices[index];
      if (!found) throw new Error(`no fleet device ${index}`);
      return found;
    };
    const idOf = (index: number): number => {
      const id = ids.get(device(index).uuid);
      if (id === undefined) throw new Error(`no id for fleet device ${index}`);
      return id;
    };
    /** The device's own supervisor API, called directly (not through the proxy). */
    const direct = async <T>(index: number, path: string): Promise<T> => {
      const { port, apiKey } = device(index);
      const response = await fetch(`http://127.0.0.1:${port}${path}?apikey=${apiKey}`);
      if (!response.ok)
        throw new Error(`GET ${path} on device ${index}: ${response.status} ${await response.text()}`);
      return (await response.json()) as T;
    };
    const stateOf = (index: number) => direct<DeviceState>(index, "/v1/device");
    const appOf = (index: number) => direct<AppInfo>(index, `/v1/apps/${appId}`);

    const auditSince = async (after: number): Promise<AuditRow[]> =>
      server.test.db.query<AuditRow>({
        text: `SELECT "id", "is_issued_by__actor", "method", "path", "data", "results"
             FROM "supervisor_command" WHERE "id" > $1::int4 ORDER BY "id"`,
        values: [after],
      });
    const lastAuditId = async (): Promise<number> =>
      (
        await server.test.db.query<{ id: number | null }>({
          text: `SELECT max("id") AS "id" FROM "supervisor_command"`,
          values: [],
        })
      )[0]?.id ?? 0;
    /** The one audit row a call left. */
    const onlyAuditSince = async (after: number): Promise<AuditRow> => {
      const rows = await auditSince(after);
      expect(rows, JSON.stringify(rows)).toHaveLength(1);
      return rows[0] as AuditRow;
    };

    beforeAll(async () => {
      server = await startTestServer("embedded");
      await seedDemo(server.test.db);
      // A fleet of its own, so the demo devices (which never reported) stay out of it.
      const created = await server.app.inject({
        method: "POST",
        url: "/v6/application",
        payload: { app_name: "sdk-proxied", device_type: "raspberrypi4-64", organization: 1 },
      });
      expect(created.statusCode, created.body).toBe(201);
      appId = JSON.parse(created.body).id;
      const provisioning = await server.app.inject({
        method: "POST",
        url: `/api-key/application/${appId}/provisioning`,
      });
      expect(provisioning.statusCode, provisioning.body).toBe(200);
      const key = JSON.parse(provisioning.body);
      // The poll interval is long on purpose: a new commit arriving within seconds is then the
      // work of /v1/update, not of a periodic poll.
      fleet = await startFleet(
        [
          ...["--api", server.url, "--provisioning-key", key, "--fleet", String(appId)],
          ...["--devices", String(DEVICES), "--data-dir", base],
          ...[
            "--heartbeat-interval",
            "1",
            "--poll-interval",
            "60",
            "--download-ms",
            "50",
            "--install-ms",
            "20",
          ],
        ],
        DEVICES,
      );
      const deadline = Date.now() + 30_000;
      for (;;) {
        const rows = await server.test.db.prisma.device.findMany({
          where: { belongs_to__application: appId, is_online: true, supervisor_api_port: { not: null } },
        });
        if (rows.length === DEVICES) {
          ids = new Map(rows.map((row) => [row.uuid, row.id]));
          break;
        }
        if (Date.now() > deadline) throw new Error("devices did not report");
        await sleep(200);
      }

      // A normal user, a member of organization 1 (which owns the fleet).
      const credentials = {
        username: "sdk-proxy-member",
        email: "sdk-proxy@example.com",
        password: "sdk-proxy-pw-1",
      };
      const user = await server.app.inject({ method: "POST", url: "/v6/user", payload: credentials });
      expect(user.statusCode, `POST /v6/user: ${user.body}`).toBe(201);
      const row = await server.test.db.prisma.user.findUniqueOrThrow({
        where: { username: credentials.username },
      });
      expect(row.is_admin).toBe(false);
      memberActor = row.actor;
      const membership = await server.app.inject({
        method: "POST",
        url: "/v6/organization_membership",
        payload: { user: row.id, is_member_of__organization: 1, role: "member" },
      });
      expect(membership.statusCode, `POST /v6/organization_membership: ${membership.body}`).toBe(201);
      const login = await fetch(`${server.url}/login_`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: credentials.username, password: credentials.password }),
      });
      const jwt = await login.text();
      expect(login.status, `POST /login_: ${jwt}`).toBe(200);
      ({ sdk, log } =
        api === "v7"
          ? loggedSdk(server.url, "latest")
          : (loggedSdk(server.url) as unknown as { sdk: LatestSDK; log: Exchange[] }));
      await call("auth.loginWithToken", () => sdk.auth.loginWithToken(jwt));
    }, 120_000);
    afterAll(async () => {
      fleet?.child.kill("SIGTERM");
      await server?.close();
      rmSync(base, { recursive: true, force: true });
    });

    it("device.ping resolves, sending a GET /ping through the proxy (not audited)", async () => {
      const before = await lastAuditId();
      const { result, requests } = await traced("device.ping", () => sdk.models.device.ping(device(0).uuid));
      expect(result).toBeUndefined();
      expect(requests.at(-1)).toBe(
        `POST ${server.url}/supervisor/ping ${JSON.stringify({ method: "GET", deviceId: idOf(0), appId })}`,
      );
      expect(await auditSince(before)).toEqual([]);
      // By id too.
      await call("device.ping(id)", () => sdk.models.device.ping(idOf(0)));
    });

    it("device.getSupervisorState returns the device's own /v1/device object", async () => {
      const { result, requests } = await traced("device.getSupervisorState", () =>
        sdk.models.device.getSupervisorState(device(0).uuid),
      );
      expect(requests.at(-1)).toBe(
        `POST ${server.url}/supervisor/v1/device ${JSON.stringify({ uuid: device(0).uuid, method: "GET" })}`,
      );
      const own = await stateOf(0);
      expect(result).toEqual({ ...own, blinking: expect.any(Boolean) });
      expect(result).toMatchObject({
        api_port: device(0).port,
        status: "Idle",
        supervisor_version: "17.1.4",
      });
    });

    it("device.identify makes that device (and only it) blink", async () => {
      expect((await stateOf(1)).blinking).toBe(false);
      const before = await lastAuditId();
      const { result, requests } = await traced("device.identify", () =>
        sdk.models.device.identify(device(1).uuid),
      );
      expect(result).toBeUndefined();
      expect(requests.at(-1)).toBe(
        `POST ${server.url}/supervisor/v1/blink ${JSON.stringify({ uuid: device(1).uuid })}`,
      );
      expect((await stateOf(1)).blinking).toBe(true);
      expect((await stateOf(2)).blinking).toBe(false);
      const audit = await onlyAuditSince(before);
      expect(audit).toMatchObject({
        is_issued_by__actor: memberActor,
        method: "POST",
        path: "/v1/blink",
        data: null,
        results: [{ deviceId: idOf(1), uuid: device(1).uuid, statusCode: 200, ok: true }],
      });
    });

    it("device.restartApplication restarts the application in a new container and returns 'OK'", async () => {
      const before = await lastAuditId();
      const { containerId } = await appOf(1);
      const { result, requests } = await traced("device.restartApplication", () =>
        sdk.models.device.restartApplication(device(1).uuid),
      );
      expect(result).toBe("OK");
      expect(requests.at(-1)).toBe(
        `POST ${server.url}/supervisor/v1/restart ${JSON.stringify({ deviceId: idOf(1), appId, data: { appId } })}`,
      );
      const after = await appOf(1);
      // The real /v1/apps/:appId says nothing of whether it runs: /v1/device's status does.
      expect((await stateOf(1)).status).not.toBe("exited");
      expect(after.containerId).not.toBe(containerId);
      expect(await onlyAuditSince(before)).toMatchObject({
        is_issued_by__actor: memberActor,
        path: "/v1/restart",
        data: { appId },
        results: [{ deviceId: idOf(1), statusCode: 200, ok: true }],
      });
    });

    it("device.purge empties the application's data folder on the device", async () => {
      const dataFolder = join(base, "1", "apps", String(appId), "data");
      writeFileSync(join(dataFolder, "kept-by-the-app.txt"), "precious");
      expect(readdirSync(dataFolder)).toEqual(["kept-by-the-app.txt"]);
      const before = await lastAuditId();
      const { result, requests } = await traced("device.purge", () =>
        sdk.models.device.purge(device(1).uuid),
      );
      expect(result).toBeUndefined();
      expect(requests.at(-1)).toBe(
        `POST ${server.url}/supervisor/v1/purge ${JSON.stringify({ deviceId: idOf(1), appId, data: { appId } })}`,
      );
      expect(readdirSync(dataFolder)).toEqual([]);
      expect((await stateOf(1)).status).not.toBe("exited");
      expect(await onlyAuditSince(before)).toMatchObject({
        path: "/v1/purge",
        data: { appId },
        results: [{ deviceId: idOf(1), statusCode: 200, ok: true }],
      });
    });

    it("device.update makes the device fetch its target at once and run the new release", async () => {
      // A new release becomes the fleet's target; the devices poll only once a minute.
      const commit = "5dc1a1e2b3c4d5e6f708192a3b4c5d6e";
      const release = await server.test.db.prisma.release.create({
        data: { belongs_to__application: appId, commit, status: "success", start_timestamp: new Date() },
      });
      await server.test.db.prisma.application.update({
        where: { id: appId },
        data: { should_be_running__release: release.id },
      });
      expect((await stateOf(2)).commit).not.toBe(commit);
      const before = await lastAuditId();
      const { result, requests } = await traced("device.update", () =>
        sdk.models.device.update(device(2).uuid, { force: false }),
      );
      expect(result).toBeUndefined();
      expect(requests.at(-1)).toBe(
        `POST ${server.url}/supervisor/v1/update ${JSON.stringify({ deviceId: idOf(2), appId, data: { force: false } })}`,
      );
      const state = await eventually(
        () => stateOf(2),
        (s) => s.commit === commit && s.status === "Idle",
        "device 2 running the new release",
        5_000,
      );
      expect(state.update_failed).toBe(false);
      // The devices that were not told still run what they ran.
      expect((await stateOf(3)).commit).not.toBe(commit);
      expect(await onlyAuditSince(before)).toMatchObject({
        path: "/v1/update",
        data: { force: false },
        results: [{ deviceId: idOf(2), statusCode: 204, ok: true }],
      });
    });

    it("device.reboot stops the application, answers 202 {Data:'OK'}, and the device comes back up", async () => {
      const before = await lastAuditId();
      const { result, requests } = await traced("device.reboot", () =>
        sdk.models.device.reboot(device(2).uuid),
      );
      expect(requests.at(-1)).toBe(
        `POST ${server.url}/supervisor/v1/reboot ${JSON.stringify({ deviceId: idOf(2), data: { force: false } })}`,
      );
      expect(result).toEqual({ Data: "OK", Error: null });
      // Right after the answer the application is down or starting again.
      const state = await stateOf(2);
      expect(["exited", "Starting"], JSON.stringify(state)).toContain(state.status);
      await eventually(
        () => stateOf(2),
        (s) => s.status === "Idle",
        "device 2 back up after the reboot",
      );
      expect(await onlyAuditSince(before)).toMatchObject({
        path: "/v1/reboot",
        data: { force: false },
        results: [{ deviceId: idOf(2), statusCode: 202, ok: true }],
      });
    });

    it("application.reboot reboots every online device of the fleet", async () => {
      const before = await lastAuditId();
      const { result, requests } = await traced("application.reboot", () =>
        sdk.models.application.reboot(appId, { force: false }),
      );
      expect(result).toBeUndefined();
      expect(requests.at(-1)).toBe(
        `POST ${server.url}/supervisor/v1/reboot ${JSON.stringify({ appId, data: { force: false } })}`,
      );
      const audit = await onlyAuditSince(before);
      expect(audit.path).toBe("/v1/reboot");
      expect(audit.results.map((r) => [r.uuid, r.statusCode]).sort()).toEqual(
        fleet.devices.map((d) => [d.uuid, 202]).sort(),
      );
      for (let index = 0; index < DEVICES; index++) {
        await eventually(
          () => stateOf(index),
          (s) => s.status === "Idle",
          `device ${index} back up after the fleet reboot`,
        );
      }
    });

    it("a device holding the update lock turns the proxied 423 into BalenaSupervisorLockedError", async () => {
      const lock = join(base, "3", "updates.lock");
      writeFileSync(lock, "");
      try {
        const before = await lastAuditId();
        const { containerId } = await appOf(3);
        const attempts: [string, () => Promise<unknown>][] = [
          ["device.reboot", () => sdk.models.device.reboot(device(3).uuid)],
          ["device.shutdown", () => sdk.models.device.shutdown(device(3).uuid, { force: false })],
          ["device.restartApplication", () => sdk.models.device.restartApplication(device(3).uuid)],
          ["device.purge", () => sdk.models.device.purge(device(3).uuid)],
        ];
        for (const [what, attempt] of attempts) {
          const from = log.length;
          const error = await attempt().then(
            () => undefined,
            (e: unknown) => e,
          );
          const sent = log
            .slice(from)
            .map((e) => `  ${e.request}\n    → ${e.response ?? "(no answer)"}`)
            .join("\n");
          expect(error, `${what} on a locked device:\n${sent}`).toBeInstanceOf(
            sdk.errors.BalenaSupervisorLockedError,
          );
          expect(log.at(-1)?.response, `${what}:\n${sent}`).toMatch(/^423 /);
        }
        // The lock was respected: the application kept running in the same container.
        expect(await appOf(3)).toMatchObject({ containerId });
        expect((await stateOf(3)).status).toBe("Idle");
        const rows = await auditSince(before);
        expect(rows.map((r) => [r.path, r.results.map((x) => x.statusCode)])).toEqual([
          ["/v1/reboot", [423]],
          ["/v1/shutdown", [423]],
          ["/v1/restart", [423]],
          ["/v1/purge", [423]],
        ]);
      } finally {
        rmSync(lock, { force: true });
      }
    });

    it("device.shutdown stops the device: its supervisor stops answering", async () => {
      const before = await lastAuditId();
      const { result, requests } = await traced("device.shutdown", () =>
        sdk.models.device.shutdown(device(3).uuid, { force: false }),
      );
      expect(result).toBeUndefined();
      expect(requests.at(-1)).toBe(
        `POST ${server.url}/supervisor/v1/shutdown ${JSON.stringify({ deviceId: idOf(3), appId, data: { force: false } })}`,
      );
      expect(await onlyAuditSince(before)).toMatchObject({
        path: "/v1/shutdown",
        data: { force: false },
        results: [{ deviceId: idOf(3), statusCode: 202, ok: true }],
      });
      await eventually(
        () =>
          fetch(`http://127.0.0.1:${device(3).port}/ping`).then(
            () => "answering",
            () => "gone",
          ),
        (answer) => answer === "gone",
        "device 3 gone after the shutdown",
        5_000,
      );
      // The others are still there.
      expect((await stateOf(0)).status).toBe("Idle");
    });

    it(`reads devices and fleets through /${api}/ only`, () => {
      const odata = log
        .map((e) => e.request)
        .filter((request) => /^\S+ http:\/\/[^/]+\/v\d+\//.test(request));
      expect(odata.length).toBeGreaterThan(0);
      expect(odata.filter((request) => !request.includes(`/${api}/`))).toEqual([]);
    });
  },
);
