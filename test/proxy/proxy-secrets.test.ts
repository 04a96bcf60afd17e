import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import {
  FAST,
  removeDir,
  type SupervisorProcess,
  spawnSupervisor,
  tempDir,
  waitFor,
} from "../support/supervisor/supervisor-process.ts";

// A real supervisor registered with the cloud, operated through the cloud's proxy: its answer
// leaves the device's own supervisor key out, and the proxy's audit row keeps the command without
// the credentials in it.

describe.each(databaseKinds)("no device credential through the proxy on %s", (kind) => {
  let server: TestServer;
  let device: SupervisorProcess;
  let deviceId: number;
  let appId: number;
  const dir = tempDir();

  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    const created = await server.app.inject({
      method: "POST",
      url: "/v6/application",
      payload: { app_name: "audited", device_type: "raspberrypi4-64", organization: 1 },
    });
    expect(created.statusCode, created.body).toBe(201);
    appId = JSON.parse(created.body).id;
    const provisioning = await server.app.inject({
      method: "POST",
      url: `/api-key/application/${appId}/provisioning`,
    });
    device = await spawnSupervisor(
      [
        ...[
          "--api",
          server.url,
          "--fleet",
          String(appId),
          "--provisioning-key",
          JSON.parse(provisioning.body),
        ],
        ...["--port", "0", "--heartbeat-interval", "1", ...FAST],
      ],
      dir,
    );
    const [row] = await waitFor(
      () =>
        server.test.db.prisma.device.findMany({
          where: { uuid: device.uuid, is_online: true, supervisor_api_port: { not: null } },
        }),
      (rows) => rows.length === 1,
      30_000,
    ).then((seen) => seen.at(-1) ?? []);
    deviceId = row?.id ?? 0;
  }, 120_000);
  afterAll(async () => {
    await device?.stop();
    await server?.close();
    removeDir(dir);
  });

  const command = (path: string, body: object) =>
    server.app.inject({ method: "POST", url: `/supervisor${path}`, payload: { uuid: device.uuid, ...body } });

  it("answers GET /v1/apps/:appId without the device's supervisor key", async () => {
    const answer = await command(`/v1/apps/${appId}`, { method: "GET" });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.body).not.toContain(device.apiKey);
    // One device: its own answer, as it gave it.
    const { env } = JSON.parse(answer.body) as { env: Record<string, string> };
    expect(env).toMatchObject({ PLATFORM_DEVICE_UUID: device.uuid });
    expect(Object.keys(env)).not.toContain("PLATFORM_SUPERVISOR_API_KEY");
  });

  it("records a host-config command without the proxy password it carried", async () => {
    const password = `proxy-secret-${kind}-${Date.now()}`;
    const proxy = { type: "socks5", ip: "192.0.2.10", port: 1080, login: "operator", password };
    const answer = await command("/v1/device/host-config", { method: "PATCH", data: { network: { proxy } } });
    expect(answer.statusCode, answer.body).toBe(200);
    // The device got it…
    const read = await command("/v1/device/host-config", { method: "GET" });
    expect(read.body).toContain(password);
    // …and the audit row says what was asked, without it.
    const rows = await server.test.db.query<{ data: unknown; results: unknown }>({
      text: `SELECT "data", "results" FROM "supervisor_command" WHERE "path" = '/v1/device/host-config'`,
      values: [],
    });
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(password);
    const data = typeof rows[0]?.data === "string" ? JSON.parse(rows[0].data) : rows[0]?.data;
    expect(data).toEqual({ network: { proxy: { ...proxy, password: "[redacted]" } } });
    expect(JSON.stringify(rows[0]?.results)).toContain(String(deviceId));
  });
});
