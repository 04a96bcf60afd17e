import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDefaultCatalogue } from "../../src/catalogue/defaults.ts";
import { databaseKinds } from "../support/databases.ts";
import { type Exchange, type LatestSDK, loggedSdk } from "../support/sdk/balena-sdk.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { type FleetDevice, startFleet } from "../support/supervisor/fleet.ts";

// Issue 30, item 10: the restart routes balena-sdk calls outside /supervisor, served through the
// cloud proxy on real `fleetgate fleet` devices: `POST /application/:id/restart` (application.restart,
// both lines) and `POST /device/:id/restart` (19.7.3's device.restartApplication for a supervisor
// before 7.0.0).

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(databaseKinds)("restart routes on fleet devices, on %s", (kind) => {
  let server: TestServer;
  let fleet: { child: ChildProcess; devices: FleetDevice[] };
  let appId: number;
  let emptyFleet: number;
  const ids = new Map<string, number>();
  let jwt: string;
  const base = mkdtempSync(join(tmpdir(), "fleetgate-restart-routes-"));

  const device = (index: number) => {
    const found = fleet.devices[index];
    if (!found) throw new Error(`no fleet device ${index}`);
    return found;
  };
  const idOf = (index: number) => ids.get(device(index).uuid) as number;
  const containerOf = async (index: number) => {
    const { port, apiKey } = device(index);
    const response = await fetch(`http://127.0.0.1:${port}/v1/apps/${appId}?apikey=${apiKey}`);
    return ((await response.json()) as { containerId: string }).containerId;
  };
  const inject = async (method: "POST", url: string, payload?: unknown) => {
    const reply = await server.app.inject({ method, url, ...(payload ? { payload } : {}) });
    expect(reply.statusCode, `${method} ${url}: ${reply.body}`).toBeLessThan(300);
    return JSON.parse(reply.body);
  };
  const sdkOf = async (line: "19.7.3" | "latest") => {
    const logged =
      line === "latest"
        ? loggedSdk(server.url, "latest")
        : (loggedSdk(server.url) as unknown as { sdk: LatestSDK; log: Exchange[] });
    await logged.sdk.auth.loginWithToken(jwt);
    return logged;
  };
  const requestOf = (log: Exchange[]) => log.at(-1)?.request.replace(server.url, "");

  beforeAll(async () => {
    server = await startTestServer(kind);
    await loadDefaultCatalogue(server.test.db);
    appId = (
      await inject("POST", "/v6/application", {
        app_name: "restarted",
        device_type: "raspberrypi4-64",
        organization: 1,
      })
    ).id;
    emptyFleet = (
      await inject("POST", "/v6/application", {
        app_name: "nobody-online",
        device_type: "raspberrypi4-64",
        organization: 1,
      })
    ).id;
    const key = await inject("POST", `/api-key/application/${appId}/provisioning`);
    // Device 0 runs a current supervisor, device 1 one from before 7.0.0.
    fleet = await startFleet(
      [
        ...["--api", server.url, "--provisioning-key", key, "--fleet", String(appId), "--devices", "2"],
        ...["--supervisor-version", "17.1.4,6.6.0", "--data-dir", base, "--heartbeat-interval", "1"],
        ...["--poll-interval", "60", "--download-ms", "50", "--install-ms", "20"],
      ],
      2,
    );
    const deadline = Date.now() + 30_000;
    for (;;) {
      const rows = await server.test.db.prisma.device.findMany({
        where: { belongs_to__application: appId, is_online: true, supervisor_api_port: { not: null } },
      });
      if (rows.length === 2) {
        for (const row of rows) ids.set(row.uuid, row.id);
        break;
      }
      if (Date.now() > deadline) throw new Error("devices did not report");
      await sleep(200);
    }
    // A member of organization 1, which owns both fleets.
    const credentials = { username: "restarter", email: "restarter@example.com", password: "restarter-pw-1" };
    const user = await inject("POST", "/v6/user", credentials);
    await inject("POST", "/v6/organization_membership", { user: user.id, is_member_of__organization: 1 });
    const login = await fetch(`${server.url}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: credentials.username, password: credentials.password }),
    });
    jwt = await login.text();
    expect(login.status, jwt).toBe(200);
  }, 120_000);
  afterAll(async () => {
    fleet?.child.kill("SIGTERM");
    await server?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it("19.7.3's device.restartApplication on a supervisor before 7.0.0: POST /device/:id/restart", async () => {
    const { sdk, log } = await sdkOf("19.7.3");
    const before = await containerOf(1);
    const result = await sdk.models.device.restartApplication(device(1).uuid);
    expect(requestOf(log)).toBe(`POST /device/${idOf(1)}/restart`);
    expect(result).toBe("OK");
    expect(await containerOf(1)).not.toBe(before);
    // The proxy's audit has it as the /v1/restart it is.
    const [audit] = await server.test.db.query<{ path: string; data: unknown }>({
      text: `SELECT "path", "data" FROM "supervisor_command" ORDER BY "id" DESC LIMIT 1`,
      values: [],
    });
    expect(audit).toMatchObject({ path: "/v1/restart" });
  });

  it.each(["19.7.3", "latest"] as const)(
    "balena-sdk %s application.restart restarts every online device",
    async (line) => {
      const { sdk, log } = await sdkOf(line);
      const before = await Promise.all([containerOf(0), containerOf(1)]);
      await sdk.models.application.restart(appId);
      expect(requestOf(log)).toBe(`POST /application/${appId}/restart`);
      const after = await Promise.all([containerOf(0), containerOf(1)]);
      expect(after[0]).not.toBe(before[0]);
      expect(after[1]).not.toBe(before[1]);
      // A fleet with no device online has nothing to restart.
      await sdk.models.application.restart(emptyFleet);
      const reply = await fetch(`${server.url}/application/${emptyFleet}/restart`, {
        method: "POST",
        headers: { authorization: `Bearer ${jwt}` },
      });
      expect([reply.status, await reply.text()]).toEqual([200, "OK"]);
    },
  );

  it("a fleet or device the caller cannot see is not found, for balena-sdk as for any other", async () => {
    const outsider = { username: "outsider", email: "outsider@example.com", password: "outsider-pw-1" };
    await inject("POST", "/v6/user", outsider);
    const login = await fetch(`${server.url}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: outsider.username, password: outsider.password }),
    });
    const token = await login.text();
    for (const url of [
      `/application/${appId}/restart`,
      `/device/${idOf(1)}/restart`,
      "/application/999999/restart",
    ]) {
      const reply = await fetch(`${server.url}${url}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
      });
      expect(reply.status, url).toBe(404);
    }
    const anonymous = await server.app.inject({
      method: "POST",
      url: `/application/${appId}/restart`,
      headers: { authorization: "" },
    });
    expect(anonymous.statusCode).toBe(401);
  });
});
