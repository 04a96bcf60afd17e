import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { MAIN_SERVICE } from "../application.ts";
import type { Device } from "../device.ts";
import { hasFeature } from "../versions.ts";
import { type ApiRequest, failed, isTruthy, json, type Reply, type ReplySink, toAppId } from "./reply.ts";
import type { ApiDeps, Route } from "./route.ts";

// The v2 device endpoints, as balena-supervisor's device-api/v2.ts answers them:
// `{status: "success", …}` bodies, each endpoint from the version that introduced it.

// Real devices report an architecture per device type; the simulation runs on any.
const ARCH_OF: Readonly<Record<string, string>> = {
  "raspberrypi4-64": "aarch64",
  raspberrypi3: "armv7hf",
  "generic-amd64": "amd64",
  "intel-nuc": "amd64",
};

const NO_CLIENT = "Attempt to communicate with API, without initialized client";

export function v2DeviceRoutes(deps: ApiDeps): Route[] {
  return [...localRoutes(deps), ...stateRoutes(deps), ...deviceInfoRoutes(deps), ...maintenanceRoutes(deps)];
}

/** /v2/version and the local-mode endpoints. */
function localRoutes(deps: ApiDeps): Route[] {
  const { device } = deps;
  return [
    {
      method: "GET",
      path: "/v2/version",
      feature: "v2Local",
      handle: () => json(200, { status: "success", version: device.supervisorVersion }),
    },
    {
      method: "GET",
      path: "/v2/local/target-state",
      feature: "v2Local",
      // Answered outside local mode too (docs: the one local endpoint that may be); apps is
      // empty unless a local target was set, which this simulation never is.
      handle: () =>
        json(200, {
          status: "success",
          state: {
            local: { name: device.deviceName, config: {}, apps: {} },
            dependent: { apps: [], devices: [] },
          },
        }),
    },
    {
      method: "GET",
      path: "/v2/local/device-info",
      feature: "v2Local",
      handle: () =>
        json(200, {
          status: "success",
          info: { arch: ARCH_OF[deps.deviceType] ?? "amd64", deviceType: deps.deviceType },
        }),
    },
  ];
}

/** What runs: the service's container and the state of the app, its containers and images. */
function stateRoutes({ device }: ApiDeps): Route[] {
  return [
    { method: "GET", path: "/v2/containerId", feature: "v2ContainerId", handle: containerId(device) },
    { method: "GET", path: "/v2/state/status", feature: "v2StateStatus", handle: () => stateStatus(device) },
  ];
}

function containerId(device: Device) {
  const services = (): Record<string, string> =>
    device.installed ? { [MAIN_SERVICE]: device.app.containerId } : {};
  return (request: ApiRequest): Reply => {
    const name = request.query.get("serviceName") ?? request.query.get("service");
    if (name === null) return json(200, { status: "success", services: services() });
    const containerId = services()[name];
    return containerId === undefined
      ? failed(503, "Could not find service with that name")
      : json(200, { status: "success", containerId });
  };
}

function stateStatus(device: Device): Reply {
  const { installed } = device;
  const progress = device.updater.downloadProgress;
  const image = device.imageName();
  return json(200, {
    status: "success",
    appState: device.applying ? "applying" : "applied",
    overallDownloadProgress: progress,
    containers: installed
      ? [
          {
            status: device.serviceStatus(),
            serviceName: MAIN_SERVICE,
            appId: device.app.appId,
            imageId: device.imageId(),
            serviceId: device.app.appId,
            containerId: device.app.containerId,
            createdAt: device.app.createdAt,
          },
        ]
      : [],
    images: installed
      ? [
          {
            name: image,
            appId: device.app.appId,
            serviceName: MAIN_SERVICE,
            imageId: device.imageId(),
            dockerImageId: `sha256:${image?.split("sha256:")[1] ?? ""}`,
            status: device.updater.downloading ? "Downloading" : "Downloaded",
            downloadProgress: progress,
          },
        ]
      : [],
    release: device.commit,
  });
}

/** The device's name, its tags and its link to the cloud. */
function deviceInfoRoutes(deps: ApiDeps): Route[] {
  return [
    {
      method: "GET",
      path: "/v2/device/name",
      feature: "v2DeviceInfo",
      handle: () => json(200, { status: "success", deviceName: deps.device.deviceName }),
    },
    {
      method: "GET",
      path: "/v2/device/tags",
      feature: "v2DeviceInfo",
      // The tags come from the cloud; without one (unmanaged, or unreachable) the real one answers 500.
      handle: async () => {
        try {
          if (!deps.cloud) throw new Error(NO_CLIENT);
          return json(200, { status: "success", tags: await deps.cloud.tags() });
        } catch (error) {
          return failed(500, (error as Error).message);
        }
      },
    },
    {
      method: "GET",
      path: "/v2/device/vpn",
      feature: "v2Vpn",
      // A managed device's "VPN" is its link to the cloud: connected while its reports get through.
      handle: () =>
        json(200, {
          status: "success",
          vpn: { enabled: deps.cloud !== undefined, connected: deps.cloud?.connected() ?? false },
        }),
    },
  ];
}

/** Orphaned volumes and the journal. */
function maintenanceRoutes(deps: ApiDeps): Route[] {
  return [
    {
      method: "GET",
      path: "/v2/cleanup-volumes",
      feature: "v2Cleanup",
      handle: () => cleanupVolumes(deps.device),
    },
    { method: "POST", path: "/v2/journal-logs", feature: "v2Journal", handle: journalLogs(deps) },
  ];
}

// Volumes of apps the device no longer runs are orphans: apps/<other id>/ goes.
function cleanupVolumes(device: Device): Reply {
  const apps = join(device.dataDir, "apps");
  for (const entry of readdirSync(apps)) {
    if (entry !== String(device.app.appId)) rmSync(join(apps, entry), { recursive: true, force: true });
  }
  return json(200, { status: "success" });
}

function journalLogs({ journal, version }: ApiDeps) {
  const withFormat = hasFeature(version, "v2JournalFormat");
  return ({ body }: ApiRequest): Reply => {
    const count = toAppId(body.count) ?? undefined;
    const unit = typeof body.unit === "string" ? body.unit : undefined;
    // `format` came with 10.3.0; journalctl's default is short.
    const format = withFormat && typeof body.format === "string" ? body.format : "short";
    const query = { count, unit, format };
    const follow = isTruthy(body.follow);
    return {
      status: 200,
      stream: (sink: ReplySink) => {
        for (const line of journal.read(query)) sink.write(line);
        if (!follow) return sink.end();
        const stop = journal.follow(query, (line) => sink.write(line));
        sink.onClose(stop);
      },
    };
  };
}
