import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { spawnFleetgate } from "../support/processes.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

interface Started {
  readonly child: ChildProcess;
  readonly line: { uuid: string; port: number; apiKey: string };
}

/** A real `fleetgate supervisor` process; resolves with the JSON line it prints once it listens. */
async function startSupervisor(args: string[]): Promise<Started> {
  const { child, ready } = await spawnFleetgate(["supervisor", ...args], {
    what: "supervisor",
    timeoutMs: 20_000,
    ready: (out) => {
      const [first] = out.split("\n");
      return out.includes("\n") && first ? (JSON.parse(first) as Started["line"]) : undefined;
    },
  });
  return { child, line: ready };
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

// The device side and the cloud side together: a real supervisor process registers with a
// provisioning key, reports its state, and follows its fleet's target release.
describe("a managed supervisor against the real server", () => {
  let server: TestServer;
  let supervisor: Started;
  const dataDir = mkdtempSync(join(tmpdir(), "fleetgate-device-"));
  beforeAll(async () => {
    server = await startTestServer("embedded");
    await seedDemo(server.test.db);
    const key = JSON.parse(
      (await server.app.inject({ method: "POST", url: "/api-key/application/1/provisioning" })).body,
    );
    supervisor = await startSupervisor([
      ...["--api", server.url, "--provisioning-key", key, "--fleet", "1"],
      ...["--port", "0", "--data-dir", dataDir, "--heartbeat-interval", "1", "--poll-interval", "1"],
    ]);
  });
  afterAll(async () => {
    supervisor?.child.kill("SIGTERM");
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const device = async () =>
    JSON.parse(
      (
        await server.app.inject({
          method: "GET",
          url: `/v6/device(uuid='${supervisor.line.uuid}')?$select=id,is_online,status,supervisor_version,is_running__release,overall_status&$expand=is_running__release($select=commit)`,
        })
      ).body,
    ).d[0];

  it("registers, reports its state and is online, running its fleet's target release", async () => {
    const target = await server.test.db.prisma.application.findUniqueOrThrow({
      where: { id: 1 },
      include: { TargetRelease: true },
    });
    const seen = await eventually(
      device,
      (d) => d?.is_online && d?.is_running__release?.[0]?.commit === target.TargetRelease?.commit,
      "the device online on its target",
    );
    expect(seen.status).toBe("Idle");
    expect(seen.supervisor_version).toEqual(expect.any(String));
    expect(seen.overall_status).toBe("idle");
    // The cloud knows where to reach its supervisor, with the key it reported (sealed).
    const row = await server.test.db.prisma.device.findUniqueOrThrow({
      where: { uuid: supervisor.line.uuid },
    });
    expect(row.supervisor_api_port).toBe(supervisor.line.port);
    expect(row.supervisor_api_key_ciphertext).toBeTruthy();
    expect(row.supervisor_api_key_ciphertext).not.toContain(supervisor.line.apiKey);
  });

  it("follows a new fleet target through the update cycle", async () => {
    const older = await server.test.db.prisma.release.findFirstOrThrow({
      where: { belongs_to__application: 1, status: "success" },
      orderBy: { created_at: "asc" },
    });
    const patch = await server.app.inject({
      method: "PATCH",
      url: "/v6/application(1)",
      payload: { commit: older.commit },
    });
    expect(patch.statusCode, patch.body).toBe(200);
    const seen = await eventually(
      device,
      (d) => d?.is_running__release?.[0]?.commit === older.commit && d.status === "Idle",
      "the device on the new target",
    );
    expect(seen.is_online).toBe(true);
  });

  it("answers its own device API with the key it printed", async () => {
    const response = await fetch(
      `http://127.0.0.1:${supervisor.line.port}/v1/device?apikey=${supervisor.line.apiKey}`,
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ api_port: supervisor.line.port, status: "Idle" });
  });
});
