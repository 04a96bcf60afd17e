import { randomBytes } from "node:crypto";
import type { LightMyRequestResponse as Response } from "fastify";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { CloudClient } from "../../src/supervisor/cloud/cloud-client.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The target-state reads: GET /device/v2/<uuid>/state (fleetgate's body) and
// GET /device/v3/<uuid>/state (balena-supervisor's TargetState, as open-balena-api's
// state-get-v3.ts builds it), for the device's own key only, with a strong ETag and
// If-None-Match → 304 as a balena-supervisor polls them.

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

const composition = {
  version: "2.1",
  services: {
    main: {
      build: { context: "." },
      environment: { FROM_COMPOSE: "c", SHARED: "compose" },
      labels: { "io.balena.features.dbus": "1" },
    },
    proxy: { image: "nginx:1.27", environment: ["LISTEN=80"], labels: ["role=edge"] },
  },
  volumes: { data: {} },
  networks: { backend: {} },
};

describe.each(databaseKinds)("the target-state reads on %s", (kind) => {
  let server: TestServer;
  const keys = new Map<number, string>();
  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    for (const fleet of [1, 2]) {
      const response = await server.app.inject({
        method: "POST",
        url: `/api-key/application/${fleet}/provisioning`,
      });
      keys.set(fleet, JSON.parse(response.body));
    }
  });
  afterAll(() => server.close());

  /** A request as the test admin (the default) or with the given key. */
  const send = async (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, payload?: object) => {
    const response = await server.app.inject({ method, url, ...(payload && { payload }) });
    expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
    return response.body ? JSON.parse(response.body) : undefined;
  };
  const register = async (fleet: number) => {
    const id = hex(16);
    const response = await server.app.inject({
      method: "POST",
      url: "/device/register",
      headers: bearer(keys.get(fleet) as string),
      payload: { application: fleet, uuid: id },
    });
    expect(response.statusCode, response.body).toBe(201);
    return { id, key: JSON.parse(response.body).api_key as string };
  };
  const target = (version: "v2" | "v3", uuid: string, key: string, ifNoneMatch?: string) =>
    server.app.inject({
      method: "GET",
      url: `/device/${version}/${uuid}/state`,
      headers: { ...bearer(key), ...(ifNoneMatch !== undefined && { "if-none-match": ifNoneMatch }) },
    });
  const release = async (fleet: number) => {
    const commit = hex(16);
    const { id } = await send("POST", "/v6/release", {
      belongs_to__application: fleet,
      commit,
      status: "running",
      composition,
    });
    await send("PATCH", `/v6/release(${id})`, { status: "success" });
    return { id: id as number, commit };
  };

  it("serves a device with a release balena's v3 target state, built from the same rows as v2", async () => {
    const { id, key } = await register(2);
    const built = await release(2);
    await send("PATCH", `/v6/device(uuid='${id}')`, { should_be_running__release: built.id });
    await send("POST", "/v6/application_environment_variable", {
      application: 2,
      name: "SHARED",
      value: "fleet",
    });
    await send("POST", "/v6/application_environment_variable", {
      application: 2,
      name: "LEVEL",
      value: "fleet",
    });
    const device = await server.test.db.prisma.device.findUniqueOrThrow({ where: { uuid: id } });
    await send("POST", "/v6/device_environment_variable", {
      device: device.id,
      name: "LEVEL",
      value: "device",
    });
    await send("POST", "/v6/application_config_variable", {
      application: 2,
      name: "BALENA_SUPERVISOR_POLL_INTERVAL",
      value: "900000",
    });
    await send("POST", "/v6/application_config_variable", {
      application: 2,
      name: "BALENA_HOST_X",
      value: "a",
    });
    await send("POST", "/v6/device_config_variable", {
      device: device.id,
      name: "BALENA_HOST_X",
      value: "b",
    });
    const fleet = await server.test.db.prisma.application.findUniqueOrThrow({ where: { id: 2 } });

    const response = await target("v3", id, key);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    expect(response.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const environment = { SHARED: "fleet", LEVEL: "device" };
    const body = JSON.parse(response.body);
    expect(body).toEqual({
      [id]: {
        name: device.device_name,
        config: { BALENA_SUPERVISOR_POLL_INTERVAL: "900000", BALENA_HOST_X: "b" },
        apps: {
          [fleet.uuid]: {
            id: 2,
            name: fleet.app_name,
            is_host: false,
            class: "fleet",
            releases: {
              [built.commit]: {
                id: built.id,
                services: {
                  main: {
                    id: expect.any(Number),
                    image_id: expect.any(Number),
                    image: `${fleet.slug}/main:${built.commit}`,
                    environment: { FROM_COMPOSE: "c", ...environment },
                    labels: { "io.balena.features.dbus": "1" },
                    composition: composition.services.main,
                  },
                  proxy: {
                    id: expect.any(Number),
                    image_id: expect.any(Number),
                    image: "nginx:1.27",
                    environment: { LISTEN: "80", ...environment },
                    labels: { role: "edge" },
                    composition: composition.services.proxy,
                  },
                },
                volumes: { data: {} },
                networks: { backend: {} },
              },
            },
          },
        },
      },
    });
    const services = body[id].apps[fleet.uuid].releases[built.commit].services;
    for (const service of Object.values(services) as { id: number; image_id: number }[]) {
      expect(service.id).toBeGreaterThan(0);
      expect(service.image_id).toBeGreaterThan(0);
    }
    expect(services.main.id).not.toBe(services.proxy.id);

    // v2 names the same release; the two bodies have ETags of their own.
    const v2 = await target("v2", id, key);
    expect(v2.statusCode, v2.body).toBe(200);
    expect(JSON.parse(v2.body)).toEqual({
      uuid: id,
      target: { commit: built.commit, appId: 2, appUuid: fleet.uuid },
    });
    expect(v2.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(v2.headers.etag).not.toBe(response.headers.etag);

    // A service keeps its id from release to release; its image is the release's own.
    const next = await release(2);
    await send("PATCH", `/v6/device(uuid='${id}')`, { should_be_running__release: next.id });
    const moved = JSON.parse((await target("v3", id, key)).body)[id].apps[fleet.uuid].releases[next.commit];
    expect(moved.services.main.id).toBe(services.main.id);
    expect(moved.services.main.image_id).not.toBe(services.main.image_id);
  });

  it("answers the fleet's release when unpinned, and a release without a composition with no services", async () => {
    const { id, key } = await register(1);
    const read = async () => JSON.parse((await target("v3", id, key)).body)[id].apps;
    const fleet = await server.test.db.prisma.application.findUniqueOrThrow({
      where: { id: 1 },
      include: { TargetRelease: true },
    });
    expect(fleet.TargetRelease).not.toBeNull();
    expect(Object.keys((await read())[fleet.uuid].releases)).toEqual([fleet.TargetRelease?.commit]);
    const commit = hex(16);
    const { id: bare } = await send("POST", "/v6/release", {
      belongs_to__application: 1,
      commit,
      status: "running",
    });
    await send("PATCH", `/v6/release(${bare})`, { status: "success" });
    await send("PATCH", `/v6/device(uuid='${id}')`, { should_be_running__release: bare });
    expect((await read())[fleet.uuid].releases).toEqual({
      [commit]: { id: bare, services: {}, volumes: {}, networks: {} },
    });
  });

  it("lets only the device's own key read its target: another device's is refused as a missing one", async () => {
    const a = await register(1);
    const b = await register(1);
    const other = await register(2);
    for (const version of ["v2", "v3"] as const) {
      const own = await target(version, a.id, a.key);
      expect(own.statusCode, own.body).toBe(200);
      // Each device's compiled read is its own: in turn, each reads itself.
      for (const device of [b, a, b]) {
        const body = JSON.parse((await target(version, device.id, device.key)).body);
        expect(version === "v2" ? body.uuid : Object.keys(body)).toEqual(
          version === "v2" ? device.id : [device.id],
        );
      }
      const missing = await target(version, hex(16), a.key);
      expect(missing.statusCode).toBe(401);
      const refusals: Response[] = [
        await target(version, b.id, a.key),
        await target(version, a.id, other.key),
        await target(version, a.id, keys.get(1) as string),
        await target(version, a.id, server.adminKey),
      ];
      for (const refused of refusals) {
        expect(refused.statusCode).toBe(missing.statusCode);
        expect(refused.body).toBe(missing.body);
        expect(refused.headers.etag).toBeUndefined();
      }
      const anonymous = await server.app.inject({
        method: "GET",
        url: `/device/${version}/${a.id}/state`,
        headers: { authorization: "" },
      });
      expect(anonymous.statusCode).toBe(401);
    }
  });

  describe.each(["v2", "v3"] as const)("%s ETags", (version) => {
    it("answers 304 with no body while nothing changed, and no statement (the cache knows its ETag)", async () => {
      const { id, key } = await register(1);
      const first = await target(version, id, key);
      const etag = first.headers.etag as string;
      expect(first.statusCode).toBe(200);
      const again = await target(version, id, key, etag);
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe("");
      expect(again.headers.etag).toBe(etag);
      expect(again.headers["x-sql-statements"]).toBe("0");
      // As RFC 9110 compares If-None-Match: weakly, in a list, or `*`.
      expect((await target(version, id, key, `W/${etag}`)).statusCode).toBe(304);
      expect((await target(version, id, key, `"nope", ${etag}`)).statusCode).toBe(304);
      expect((await target(version, id, key, "*")).statusCode).toBe(304);
      expect((await target(version, id, key, '"nope"')).statusCode).toBe(200);
      // A state report (a heartbeat) is not a change of the target.
      const report = await server.app.inject({
        method: "PATCH",
        url: `/device/v2/${id}/state`,
        headers: bearer(key),
        payload: { status: "Idle", cpu_usage: 12, download_progress: null },
      });
      expect(report.statusCode, report.body).toBe(200);
      expect((await target(version, id, key, etag)).statusCode).toBe(304);
    });

    it("answers 200 with a new ETag after every kind of change of the target", async () => {
      const { id, key } = await register(1);
      const device = await server.test.db.prisma.device.findUniqueOrThrow({ where: { uuid: id } });
      const name = `${version}_${hex(4)}`;
      // Made before the first read: a new release may move a fleet that tracks its latest one.
      const [older, newer] = [await release(1), await release(1)];
      const seen = new Set<string>();
      let etag = (await target(version, id, key)).headers.etag as string;
      seen.add(etag);
      const changes: [string, () => Promise<unknown>][] = [
        [
          "a device env var",
          () => send("POST", "/v6/device_environment_variable", { device: device.id, name, value: "1" }),
        ],
        [
          "its value",
          () => send("PATCH", `/v6/device_environment_variable?$filter=name eq '${name}'`, { value: "2" }),
        ],
        ["its removal", () => send("DELETE", `/v6/device_environment_variable?$filter=name eq '${name}'`)],
        [
          "a fleet env var",
          () => send("POST", "/v6/application_environment_variable", { application: 1, name, value: "1" }),
        ],
        [
          "a device config var",
          () =>
            send("POST", "/v6/device_config_variable", {
              device: device.id,
              name: `BALENA_${name}`,
              value: "1",
            }),
        ],
        [
          "a fleet config var",
          () =>
            send("POST", "/v6/application_config_variable", {
              application: 1,
              name: `BALENA_${name}`,
              value: "1",
            }),
        ],
        [
          "a pinned release",
          () => send("PATCH", `/v6/device(${device.id})`, { should_be_running__release: newer.id }),
        ],
        ["the device name", () => send("PATCH", `/v6/device(${device.id})`, { device_name: name })],
        [
          "the fleet's release",
          () => send("PATCH", "/v6/application(1)", { should_be_running__release: older.id }),
        ],
      ];
      for (const [what, change] of changes) {
        await change();
        // The target-state cache answers from memory until the change's announcement arrives (on
        // PostgreSQL a moment after the write's answer): within a second. A poll answered from
        // memory does no I/O, so the loop waits a moment between polls for the announcement's.
        let changed = await target(version, id, key, etag);
        for (const since = Date.now(); changed.statusCode === 304 && Date.now() - since < 1_000; ) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          changed = await target(version, id, key, etag);
        }
        expect(changed.statusCode, what).toBe(200);
        const next = changed.headers.etag as string;
        expect(next, what).not.toBe(etag);
        // The ETag names the content: removing the variable brings the first one back.
        expect(seen.has(next), what).toBe(what === "its removal");
        seen.add(next);
        expect((await target(version, id, key, next)).statusCode, what).toBe(304);
        etag = next;
      }
    });
  });

  it("the supervisor's cloud client polls with If-None-Match and keeps its target on a 304", async () => {
    const { id, key } = await register(1);
    const client = new CloudClient(server.url);
    const fetching = vi.spyOn(globalThis, "fetch");
    try {
      const first = await client.fetchTarget(id, key);
      const again = await client.fetchTarget(id, key);
      expect(again).toEqual(first);
      const statuses = await Promise.all(
        fetching.mock.results.map(async (result) => ((await result.value) as globalThis.Response).status),
      );
      expect(statuses).toEqual([200, 304]);
      const sent = fetching.mock.calls.map(
        ([, init]) => (init?.headers as Record<string, string> | undefined)?.["if-none-match"],
      );
      expect(sent[0]).toBeUndefined();
      expect(sent[1]).toMatch(/^"/);
      // A new target is read whole.
      const built = await release(1);
      await send("PATCH", `/v6/device(uuid='${id}')`, { should_be_running__release: built.id });
      expect((await client.fetchTarget(id, key)).commit).toBe(built.commit);
    } finally {
      fetching.mockRestore();
    }
  });
});
