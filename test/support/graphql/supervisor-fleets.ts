import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seedDemo } from "../../../src/seed/demo.ts";
import { CURRENT_SUPERVISOR_VERSION } from "../../../src/supervisor/versions.ts";
import { startTestServer, type TestServer } from "../server.ts";
import { type FleetDevice, startFleet, stopFleet } from "../supervisor/fleet.ts";

// The devices the GraphQL remote-control tests drive: real `fleetgate fleet` processes reporting to a
// test server on the embedded database (as test/proxy/proxy.test.ts). Fleet A: three current devices.
// Fleet B: an old supervisor (1.5.2), a current one, a slow one (answers after 5 s; the proxy waits
// 2 s) and one whose process stopped after it reported (still online for the cloud: unreachable).

export const OLD_VERSION = "1.5.2";

export interface ProxiedFleets {
  readonly server: TestServer;
  readonly apps: { readonly a: number; readonly b: number };
  readonly a: readonly FleetDevice[];
  readonly b: {
    readonly old: FleetDevice;
    readonly current: FleetDevice;
    readonly slow: FleetDevice;
    readonly gone: FleetDevice;
  };
  /** The cloud's id of a device. */
  idOf(device: FleetDevice): number;
  /** A fleet process's data directory (device n keeps its files in `<dir>/<n>`). */
  dirOf(name: "a" | "b-mixed" | "b-slow" | "b-gone"): string;
  close(): Promise<void>;
}

export async function startProxiedFleets(): Promise<ProxiedFleets> {
  const processes: Awaited<ReturnType<typeof startFleet>>[] = [];
  const base = mkdtempSync(join(tmpdir(), "fleetgate-gql-proxy-"));
  const ids = new Map<string, number>();
  const dirOf = (name: string) => join(base, name);
  // The stopped device stays online for the cloud for the whole file.
  const server = await startTestServer("embedded", {
    PROXY_TIMEOUT_MS: "2000",
    DEVICE_OFFLINE_TIMEOUT: "3600",
  });
  const close = async () => {
    for (const { child } of processes) if (child.exitCode === null) child.kill("SIGTERM");
    await server.close();
    rmSync(base, { recursive: true, force: true });
  };

  async function fleetProcess(
    name: string,
    appId: number,
    key: string,
    devices: number,
    extra: string[] = [],
  ) {
    const started = await startFleet(
      [
        ...[
          "--api",
          server.url,
          "--provisioning-key",
          key,
          "--fleet",
          String(appId),
          "--devices",
          String(devices),
        ],
        ...["--data-dir", dirOf(name), "--heartbeat-interval", "1", "--poll-interval", "5"],
        ...["--download-ms", "50", "--install-ms", "20", ...extra],
      ],
      devices,
    );
    processes.push(started);
    return started;
  }
  async function waitOnline(appId: number, count: number): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const rows = await server.test.db.prisma.device.findMany({
        where: { belongs_to__application: appId, is_online: true, supervisor_api_port: { not: null } },
      });
      if (rows.length === count) {
        for (const row of rows) ids.set(row.uuid, row.id);
        return;
      }
      if (Date.now() > deadline)
        throw new Error(`fleet ${appId}: ${rows.length} of ${count} devices reported`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  async function fleetAndKey(app_name: string) {
    const created = await server.app.inject({
      method: "POST",
      url: "/v6/application",
      payload: { app_name, device_type: "raspberrypi4-64", organization: 1 },
    });
    const appId = JSON.parse(created.body).id as number;
    const reply = await server.app.inject({
      method: "POST",
      url: `/api-key/application/${appId}/provisioning`,
    });
    return { appId, key: JSON.parse(reply.body) as string };
  }

  try {
    await seedDemo(server.test.db);
    const fleetA = await fleetAndKey("gql-proxied-a");
    const fleetB = await fleetAndKey("gql-proxied-b");
    const [pa, mixed, slow, gone] = await Promise.all([
      fleetProcess("a", fleetA.appId, fleetA.key, 3),
      fleetProcess("b-mixed", fleetB.appId, fleetB.key, 2, [
        "--supervisor-version",
        `${OLD_VERSION},${CURRENT_SUPERVISOR_VERSION}`,
      ]),
      fleetProcess("b-slow", fleetB.appId, fleetB.key, 1, ["--delay-ms", "5000"]),
      fleetProcess("b-gone", fleetB.appId, fleetB.key, 1),
    ]);
    await waitOnline(fleetA.appId, 3);
    await waitOnline(fleetB.appId, 4);
    await stopFleet(gone.child);
    const [old, current] = mixed.devices as [FleetDevice, FleetDevice];
    return {
      server,
      apps: { a: fleetA.appId, b: fleetB.appId },
      a: pa.devices,
      b: { old, current, slow: slow.devices[0] as FleetDevice, gone: gone.devices[0] as FleetDevice },
      idOf: (device) => ids.get(device.uuid) as number,
      dirOf,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
