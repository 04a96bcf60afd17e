import { type Params, StatusError } from "pinejs-client-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PrismaClient } from "../../src/generated/prisma/client.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { type BodyStatusError, FetchPine } from "../support/odata/fetch-pine.ts";
import { wire } from "../support/odata/pine-wire.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Writes through pinejs-client-core 8 (post, patch, delete, upsert) against a real listener, as
// clients-on-the-wire.md part A records them, plus the exact PATCH/DELETE shapes of balena-sdk 19
// (pinejs-client 6) sent with fetch. Every effect is checked with Prisma, never through the OData API.

type Row = Record<string, unknown>;
type Pine = {
  post(p: Params): Promise<Row>;
  patch(p: Params): Promise<unknown>;
  delete(p: Params): Promise<unknown>;
  upsert(p: Params): Promise<unknown>;
};

/** Throws unless `work` rejects with a pinejs StatusError of `status`; returns that error. */
async function statusOf(work: Promise<unknown>, status: number): Promise<BodyStatusError> {
  let caught: unknown;
  try {
    await work;
  } catch (error) {
    caught = error;
  }
  expect(caught, "the call should fail").toBeInstanceOf(StatusError);
  expect((caught as StatusError).statusCode, String((caught as Error).message)).toBe(status);
  return caught as BodyStatusError;
}

/** A PATCH/DELETE success as pinejs answers it: 200 and "OK" (a JSON string, or the text OK). */
async function expectOk(response: Response, what: string): Promise<void> {
  const text = await response.text();
  expect(response.status, `${what}: ${text}`).toBe(200);
  // pinejs v6 wire (and the issue): an empty success body becomes the JSON string "OK".
  expect(response.headers.get("content-type") ?? "", what).toMatch(/^application\/json/);
  expect(text, `${what}: body`).toBe('"OK"');
}

interface Fixture {
  readonly p: PrismaClient;
  readonly org: { id: number; handle: string };
  readonly apps: Record<"lights" | "weather" | "kiosks", { id: number; slug: string }>;
  /** The demo devices in id order. */
  readonly devices: readonly {
    id: number;
    uuid: string;
    device_name: string;
    belongs_to__application: number;
  }[];
}

describe.each(databaseKinds)("pinejs-client-core writes against the API on %s", (kind) => {
  let server: TestServer;
  let pine: FetchPine;
  let f: Fixture;
  const client = () => pine as unknown as Pine;
  const d = (i: number) => {
    const device = f.devices[i];
    if (!device) throw new Error(`no device ${i}`);
    return device;
  };
  const allDevices = () => f.p.device.findMany({ orderBy: { id: "asc" } });
  /** Sends a raw request the way balena-sdk 19 does: JSON body, filters in the pine 6 dialect. */
  const raw = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/v6/${path}`, {
      method,
      headers: {
        authorization: `Bearer ${server.adminKey}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    const p = server.test.db.prisma;
    const org = await p.organization.findUniqueOrThrow({ where: { handle: "demo" } });
    const app = (slug: string) => p.application.findUniqueOrThrow({ where: { slug } });
    f = {
      p,
      org,
      apps: {
        lights: await app("demo/smart-lights"),
        weather: await app("demo/weather-stations"),
        kiosks: await app("demo/kiosks"),
      },
      devices: await p.device.findMany({ orderBy: { id: "asc" } }),
    };
    pine = new FetchPine({ apiPrefix: `${server.url}/v6/` });
    pine.authorization = `Bearer ${server.adminKey}`;
  });
  afterAll(() => server.close());

  // ---- post ------------------------------------------------------------------------------------
  describe("post", () => {
    it("device_tag → 201 with the created object; the row exists", async () => {
      const created = await client().post({
        resource: "device_tag",
        body: { device: d(0).id, tag_key: "posted", value: "v 1/2 & 'q'" },
      });
      expect(created.id).toEqual(expect.any(Number));
      const row = await f.p.deviceTag.findUniqueOrThrow({ where: { id: created.id as number } });
      expect(row).toMatchObject({ device: d(0).id, tag_key: "posted", value: "v 1/2 & 'q'" });
      expect(created).toEqual(wire("device_tag", row));
    });

    it("application_environment_variable → the created object; the row exists", async () => {
      const created = await client().post({
        resource: "application_environment_variable",
        body: { application: f.apps.lights.id, name: "POSTED_VAR", value: "x=1" },
      });
      expect(created.id).toEqual(expect.any(Number));
      const row = await f.p.applicationEnvironmentVariable.findUniqueOrThrow({
        where: { id: created.id as number },
      });
      expect(row).toMatchObject({ application: f.apps.lights.id, name: "POSTED_VAR", value: "x=1" });
      expect(created).toEqual(wire("application_environment_variable", row));
    });

    it("release → the created object; the row exists", async () => {
      const commit = "f".repeat(32);
      const created = await client().post({
        resource: "release",
        body: {
          belongs_to__application: f.apps.weather.id,
          commit,
          status: "success",
          semver: "2.0.0",
          note: "posted",
        },
      });
      expect(created.id).toEqual(expect.any(Number));
      const row = await f.p.release.findUniqueOrThrow({ where: { id: created.id as number } });
      expect(row).toMatchObject({
        belongs_to__application: f.apps.weather.id,
        commit,
        status: "success",
        semver: "2.0.0",
        note: "posted",
        source: "cloud",
        is_final: true,
        is_invalidated: false,
      });
      expect(created).toEqual(wire("release", row));
      // The fleet tracks its latest release (the default), so the newest successful one becomes its target.
      const fleet = await f.p.application.findUniqueOrThrow({ where: { id: f.apps.weather.id } });
      expect(fleet.should_track_latest_release).toBe(true);
      expect(fleet.should_be_running__release).toBe(row.id);
    });

    it("application {app_name, device_type, organization} → the created fleet; the row exists", async () => {
      const created = await client().post({
        resource: "application",
        body: { app_name: "posted-fleet", device_type: "raspberrypi4-64", organization: f.org.id },
      });
      expect(created.id).toEqual(expect.any(Number));
      const row = await f.p.application.findUniqueOrThrow({
        where: { id: created.id as number },
        include: { TargetRelease: true, DeviceType: true },
      });
      const deviceType = await f.p.deviceType.findUniqueOrThrow({ where: { slug: "raspberrypi4-64" } });
      expect(row).toMatchObject({
        app_name: "posted-fleet",
        slug: "demo/posted-fleet",
        organization: f.org.id,
        is_for__device_type: deviceType.id,
      });
      expect(created).toEqual(wire("application", row));
      expect(created).toMatchObject({ device_type: "raspberrypi4-64", slug: "demo/posted-fleet" });
    });

    it("application {app_name, is_for__device_type, organization} (balena-sdk application.create)", async () => {
      const deviceType = await f.p.deviceType.findUniqueOrThrow({ where: { slug: "raspberrypi3" } });
      const created = await client().post({
        resource: "application",
        body: { app_name: "Posted-By-Id", is_for__device_type: deviceType.id, organization: f.org.id },
      });
      const row = await f.p.application.findUniqueOrThrow({
        where: { id: created.id as number },
        include: { TargetRelease: true, DeviceType: true },
      });
      expect(row).toMatchObject({
        app_name: "Posted-By-Id",
        slug: "demo/posted-by-id",
        organization: f.org.id,
        is_for__device_type: deviceType.id,
      });
      expect(created).toEqual(wire("application", row));
    });
  });

  // ---- patch -----------------------------------------------------------------------------------
  describe("patch", () => {
    it("by id: that device changes, no other", async () => {
      const before = await allDevices();
      const target = d(1);
      await client().patch({ resource: "device", id: target.id, body: { note: "patched by id" } });
      expect(pine.sent.at(-1)).toBe(`PATCH ${server.url}/v6/device(${target.id}) {"note":"patched by id"}`);
      const after = await allDevices();
      expect(after).toEqual(
        before.map((row) => (row.id === target.id ? { ...row, note: "patched by id" } : row)),
      );
    });

    it("by alternate key {uuid}: that device changes, no other", async () => {
      const before = await allDevices();
      const target = d(2);
      await client().patch({
        resource: "device",
        id: { uuid: target.uuid },
        body: { device_name: "renamed-by-uuid" },
      });
      expect(pine.sent.at(-1)).toBe(
        `PATCH ${server.url}/v6/device(uuid='${target.uuid}') {"device_name":"renamed-by-uuid"}`,
      );
      const after = await allDevices();
      expect(after).toEqual(
        before.map((row) => (row.uuid === target.uuid ? { ...row, device_name: "renamed-by-uuid" } : row)),
      );
    });

    it("bulk with options.$filter {belongs_to__application, is_online:false}: exactly the matching rows change", async () => {
      const before = await allDevices();
      const matches = (row: (typeof before)[number]) =>
        row.belongs_to__application === f.apps.lights.id && !row.is_online;
      expect(before.filter(matches).length).toBeGreaterThan(1);
      expect(before.filter((row) => !matches(row)).length).toBeGreaterThan(1);
      await client().patch({
        resource: "device",
        options: { $filter: { belongs_to__application: f.apps.lights.id, is_online: false } },
        body: { note: "offline light" },
      });
      const after = await allDevices();
      expect(after).toEqual(before.map((row) => (matches(row) ? { ...row, note: "offline light" } : row)));
    });

    it("bulk with a $filter that matches nothing: 200, nothing changes", async () => {
      const before = await allDevices();
      await client().patch({
        resource: "device",
        options: { $filter: { device_name: "no such device" } },
        body: { note: "nobody" },
      });
      expect(await allDevices()).toEqual(before);
    });

    it("device_tag by composite key {device, tag_key}", async () => {
      const tag = await f.p.deviceTag.create({ data: { device: d(3).id, tag_key: "pk", value: "old" } });
      const other = await f.p.deviceTag.create({ data: { device: d(4).id, tag_key: "pk", value: "old" } });
      await client().patch({
        resource: "device_tag",
        id: { device: d(3).id, tag_key: "pk" },
        body: { value: "new" },
      });
      expect((await f.p.deviceTag.findUniqueOrThrow({ where: { id: tag.id } })).value).toBe("new");
      expect((await f.p.deviceTag.findUniqueOrThrow({ where: { id: other.id } })).value).toBe("old");
    });
  });

  // ---- delete ----------------------------------------------------------------------------------
  describe("delete", () => {
    it("by id: that device goes, no other", async () => {
      const before = await allDevices();
      const target = d(50);
      await client().delete({ resource: "device", id: target.id });
      expect(pine.sent.at(-1)).toBe(`DELETE ${server.url}/v6/device(${target.id})`);
      expect(await allDevices()).toEqual(before.filter((row) => row.id !== target.id));
    });

    it("with options.$filter: exactly the matching tags go", async () => {
      const devices = [d(10), d(11), d(12), d(13), d(14)];
      await f.p.deviceTag.createMany({
        data: [
          ...devices.map((device) => ({ device: device.id, tag_key: "bulk-del", value: "x" })),
          ...devices.map((device) => ({ device: device.id, tag_key: "keep", value: "x" })),
        ],
      });
      const before = await f.p.deviceTag.findMany({ orderBy: { id: "asc" } });
      const doomed = devices.slice(0, 3).map((device) => device.id);
      await client().delete({
        resource: "device_tag",
        options: { $filter: { tag_key: "bulk-del", device: { $in: doomed } } },
      });
      const after = await f.p.deviceTag.findMany({ orderBy: { id: "asc" } });
      expect(after).toEqual(
        before.filter((row) => !(row.tag_key === "bulk-del" && doomed.includes(row.device))),
      );
      expect(after.filter((row) => row.tag_key === "bulk-del").map((row) => row.device)).toEqual([
        d(13).id,
        d(14).id,
      ]);
    });
  });

  // ---- upsert ----------------------------------------------------------------------------------
  describe("upsert", () => {
    it("device_tag: the first call creates, the second (409 /unique/ on POST) patches", async () => {
      const device = d(5).id;
      const where = { device, tag_key: "k" };
      const start = pine.sent.length;
      await client().upsert({ resource: "device_tag", id: { device, tag_key: "k" }, body: { value: "v" } });
      expect(await f.p.deviceTag.findMany({ where })).toMatchObject([{ value: "v" }]);
      expect(pine.sent.slice(start)).toEqual([
        `POST ${server.url}/v6/device_tag {"value":"v","device":${device},"tag_key":"k"}`,
      ]);

      // The server's answer to the duplicate POST is what upsert relies on.
      const duplicate = await raw("POST", "device_tag", { value: "v2", device, tag_key: "k" });
      const text = await duplicate.text();
      expect(duplicate.status, text).toBe(409);
      expect(text).toMatch(/unique/i);

      const second = pine.sent.length;
      await client().upsert({ resource: "device_tag", id: { device, tag_key: "k" }, body: { value: "v2" } });
      expect(pine.sent.slice(second)).toEqual([
        `POST ${server.url}/v6/device_tag {"value":"v2","device":${device},"tag_key":"k"}`,
        `PATCH ${server.url}/v6/device_tag?$filter=device eq ${device} and tag_key eq 'k' {"value":"v2"}`,
      ]);
      const rows = await f.p.deviceTag.findMany({ where });
      expect(rows).toHaveLength(1);
      expect(rows[0]?.value).toBe("v2");
    });

    it("device_environment_variable (envVar.set): create, then patch", async () => {
      const device = d(6).id;
      const id = { device, name: "MY_VAR" };
      await client().upsert({ resource: "device_environment_variable", id, body: { value: "1" } });
      await client().upsert({ resource: "device_environment_variable", id, body: { value: "2" } });
      const rows = await f.p.deviceEnvironmentVariable.findMany({ where: id });
      expect(rows).toHaveLength(1);
      expect(rows[0]?.value).toBe("2");
    });
  });

  // ---- errors ----------------------------------------------------------------------------------
  describe("errors surface as pinejs StatusErrors with the status code", () => {
    it("post with an unknown field → 400, nothing created", async () => {
      const count = await f.p.deviceTag.count();
      await statusOf(
        client().post({
          resource: "device_tag",
          body: { device: d(7).id, tag_key: "bad", value: "x", no_such_field: 1 },
        }),
        400,
      );
      expect(await f.p.deviceTag.count()).toBe(count);
    });

    it("patch by id with an unknown field → 400, nothing changed", async () => {
      const before = await allDevices();
      await statusOf(client().patch({ resource: "device", id: d(7).id, body: { no_such_field: "x" } }), 400);
      expect(await allDevices()).toEqual(before);
    });

    it("patch with a $filter on an unknown field → 400, nothing changed", async () => {
      const before = await allDevices();
      await statusOf(
        client().patch({
          resource: "device",
          options: { $filter: { no_such_field: 1 } },
          body: { note: "x" },
        }),
        400,
      );
      expect(await allDevices()).toEqual(before);
    });

    it("post a duplicate device_tag → 409 whose body mentions unique", async () => {
      await f.p.deviceTag.create({ data: { device: d(8).id, tag_key: "dup", value: "first" } });
      const error = await statusOf(
        client().post({ resource: "device_tag", body: { device: d(8).id, tag_key: "dup", value: "second" } }),
        409,
      );
      expect(String(error.body)).toMatch(/unique/i);
      expect(await f.p.deviceTag.findMany({ where: { device: d(8).id, tag_key: "dup" } })).toMatchObject([
        { value: "first" },
      ]);
    });

    it("post a duplicate application (same organization and name) → 409", async () => {
      const count = await f.p.application.count();
      await statusOf(
        client().post({
          resource: "application",
          body: { app_name: "smart-lights", device_type: "raspberrypi4-64", organization: f.org.id },
        }),
        409,
      );
      expect(await f.p.application.count()).toBe(count);
    });

    it("post to an unknown resource → 404", async () => {
      await statusOf(client().post({ resource: "no_such_resource", body: { a: 1 } }), 404);
    });
  });

  // ---- balena-sdk 19 (pinejs-client 6) request shapes, sent with fetch --------------------------
  describe("balena-sdk 19 wire shapes", () => {
    it(`PATCH device?$filter=id in (N) {"device_name":"x"} (device.rename) → 200 "OK"`, async () => {
      const before = await allDevices();
      const target = d(20);
      await expectOk(
        await raw("PATCH", `device?$filter=id%20in%20(${target.id})`, { device_name: "x" }),
        "rename",
      );
      expect(await allDevices()).toEqual(
        before.map((row) => (row.id === target.id ? { ...row, device_name: "x" } : row)),
      );
    });

    it(`PATCH device?$filter=id in (N) {"should_be_running__release":R} then null (pin, track) → 200 "OK"`, async () => {
      const target = d(21);
      const release = await f.p.release.findFirstOrThrow({
        where: { belongs_to__application: target.belongs_to__application, status: "success" },
        orderBy: { id: "asc" },
      });
      const before = await allDevices();
      await expectOk(
        await raw("PATCH", `device?$filter=id%20in%20(${target.id})`, {
          should_be_running__release: release.id,
        }),
        "pin",
      );
      expect(await allDevices()).toEqual(
        before.map((row) =>
          row.id === target.id ? { ...row, should_be_running__release: release.id } : row,
        ),
      );
      await expectOk(
        await raw("PATCH", `device?$filter=id%20in%20(${target.id})`, { should_be_running__release: null }),
        "track",
      );
      expect(await allDevices()).toEqual(
        before.map((row) => (row.id === target.id ? { ...row, should_be_running__release: null } : row)),
      );
    });

    it("PATCH with the pine 6 list form id in (a, b) → both change", async () => {
      const before = await allDevices();
      const ids = [d(22).id, d(23).id];
      await expectOk(
        await raw("PATCH", `device?$filter=id%20in%20(${ids.join(",%20")})`, { note: "pine6 list" }),
        "bulk note",
      );
      expect(await allDevices()).toEqual(
        before.map((row) => (ids.includes(row.id) ? { ...row, note: "pine6 list" } : row)),
      );
    });

    it(`DELETE device?$filter=id in (N) (device.remove) → 200 "OK"`, async () => {
      const before = await allDevices();
      const target = d(24);
      await expectOk(await raw("DELETE", `device?$filter=id%20in%20(${target.id})`), "remove");
      expect(await allDevices()).toEqual(before.filter((row) => row.id !== target.id));
    });

    it(`DELETE device?$filter=id in (a, b) with content-type: application/json and no body → 200 "OK"`, async () => {
      const before = await allDevices();
      const ids = [d(25).id, d(26).id];
      await expectOk(
        await raw("DELETE", `device?$filter=id%20in%20(${ids.join(",%20")})`, undefined, {
          "content-type": "application/json",
        }),
        "remove many",
      );
      expect(await allDevices()).toEqual(before.filter((row) => !ids.includes(row.id)));
    });
  });
});
