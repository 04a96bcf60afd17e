import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// A tiny stand-in for the cloud's device endpoints, implementing exactly the contract the
// managed supervisor speaks, and recording every call so tests can assert on them.

export const USER_TOKEN = "userToken";
export const PROVISIONING_KEY = "provisioningKey1";
/** The fleet's uuid, as the target names it; a v3 report files the running commit under it. */
export const FLEET_UUID = "f1ee7f1ee7f1ee7f1ee7f1ee7f1ee7f1";

/** A v3 report of one device, in the v2 shape: api_secret → api_key, the fleet's release_uuid → commit. */
function asV2(report: Record<string, unknown>): Record<string, unknown> {
  const { api_secret, apps, ...fields } = report;
  const fleet = (apps as Record<string, { release_uuid?: string }> | undefined)?.[FLEET_UUID];
  return {
    ...fields,
    ...(api_secret !== undefined && { api_key: api_secret }),
    ...(apps !== undefined && { commit: fleet?.release_uuid ?? null }),
  };
}

export interface Report {
  readonly at: number;
  readonly authorization: string | undefined;
  /** Which endpoint it came through: PATCH /device/v3/state or /device/v2/<uuid>/state. */
  readonly api: "v2" | "v3";
  /** The report in the v2 shape (`api_key`, `commit`), whichever endpoint it came through. */
  readonly body: Record<string, unknown>;
  /** The body as sent. */
  readonly raw: Record<string, unknown>;
}

export interface FakeCloud {
  readonly url: string;
  readonly fleet: number;
  /** What GET /device/v2/:uuid/state answers as target.commit. */
  target: string | null;
  /** When set, the target endpoint answers 500: the cloud is failing. */
  failTargets: boolean;
  readonly provisioningCalls: { fleet: string; authorization: string | undefined }[];
  readonly registrations: { body: Record<string, unknown>; authorization: string | undefined }[];
  readonly reports: Report[];
  readonly targetPolls: number[];
  close(): Promise<void>;
}

const readJson = async (request: IncomingMessage) => {
  let text = "";
  for await (const chunk of request) text += chunk;
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
};

export async function startFakeCloud(fleet = 42): Promise<FakeCloud> {
  const devices = new Map<string, { id: number; key: string }>();
  const provisioningKeys = new Set([PROVISIONING_KEY]);
  const reply = (response: ServerResponse, status: number, body: unknown) =>
    response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));

  const cloud: Omit<FakeCloud, "url" | "close"> = {
    fleet,
    target: null,
    failTargets: false,
    provisioningCalls: [],
    registrations: [],
    reports: [],
    targetPolls: [],
  };

  const server = createServer(async (request, response) => {
    const authorization = request.headers.authorization;
    const bearer = authorization?.replace(/^Bearer /, "");
    const path = new URL(request.url ?? "/", "http://cloud").pathname;
    const body = await readJson(request);
    const provisioning = /^\/api-key\/application\/(\d+)\/provisioning$/.exec(path);
    if (request.method === "POST" && provisioning) {
      cloud.provisioningCalls.push({ fleet: provisioning[1] as string, authorization });
      if (bearer !== USER_TOKEN) return reply(response, 401, "Unauthorized");
      const key = randomBytes(8).toString("hex");
      provisioningKeys.add(key);
      return reply(response, 200, key);
    }
    if (request.method === "POST" && path === "/device/register") {
      cloud.registrations.push({ body, authorization });
      if (!bearer || !provisioningKeys.has(bearer)) return reply(response, 401, "Unauthorized");
      if (body.application !== fleet) return reply(response, 400, "Unknown fleet");
      const device = { id: devices.size + 1, key: randomBytes(16).toString("hex") };
      devices.set(body.uuid as string, device);
      return reply(response, 201, { id: device.id, uuid: body.uuid, api_key: device.key });
    }
    if (request.method === "PATCH" && path === "/device/v3/state") {
      const [uuid, ...others] = Object.keys(body);
      const device = uuid === undefined ? undefined : devices.get(uuid);
      if (!device || others.length > 0 || bearer !== device.key) return reply(response, 401, "Unauthorized");
      const report = body[uuid as string] as Record<string, unknown>;
      cloud.reports.push({ at: Date.now(), authorization, api: "v3", body: asV2(report), raw: body });
      return response.writeHead(200).end();
    }
    const state = /^\/device\/v2\/([0-9a-f]+)\/state$/.exec(path);
    const device = state && devices.get(state[1] as string);
    if (state && (!device || bearer !== device.key)) return reply(response, 401, "Unauthorized");
    if (request.method === "PATCH" && state) {
      cloud.reports.push({ at: Date.now(), authorization, api: "v2", body, raw: body });
      return response.writeHead(200).end("OK");
    }
    if (request.method === "GET" && state) {
      cloud.targetPolls.push(Date.now());
      if (cloud.failTargets) return reply(response, 500, "Server error");
      return reply(response, 200, {
        uuid: state[1],
        target: { commit: cloud.target, appId: fleet, appUuid: FLEET_UUID },
      });
    }
    reply(response, 404, "Not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(cloud, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
