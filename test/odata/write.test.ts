import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Application, Device, Organization, Release } from "../../src/generated/prisma/client.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { buildFixture, type Fixture } from "./fixture.ts";
import { World } from "./write-fixture.ts";

// OData writes (POST, PATCH, PUT, DELETE) through the real server. Expectations are computed in
// JavaScript from the rows a test inserted or read before the write; a write's effect is checked by
// reading every row of the test's world afterwards, row by row.

type Row = Record<string, unknown>;

interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | number | undefined>;
  readonly body: unknown;
  readonly raw: string;
}

const link = (id: number | null | undefined) => (id === null || id === undefined ? null : { __id: id });
const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;
const HEX32 = /^[0-9a-f]{32}$/;

describe.each(databaseKinds)("OData writes on %s", (kind) => {
  let server: TestServer;
  let fx: Fixture;

  beforeAll(async () => {
    server = await startTestServer(kind);
    fx = await buildFixture(server.test.db);
  });
  afterAll(() => server.close());

  const world = (label: string) => new World(server.test.db, label);

  async function call(
    method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE",
    path: string,
    payload?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> {
    const response = await server.app.inject({
      method,
      url: `/v6${path}`,
      headers: payload === undefined ? headers : { "content-type": "application/json", ...headers },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });
    let body: unknown = response.body;
    try {
      body = JSON.parse(response.body);
    } catch {}
    return { status: response.statusCode, headers: response.headers, body, raw: response.body };
  }

  /** A raw body text (to send JSON that is not an object). */
  async function callRaw(method: "POST" | "PATCH" | "PUT", path: string, text: string): Promise<Reply> {
    const response = await server.app.inject({
      method,
      url: `/v6${path}`,
      headers: { "content-type": "application/json" },
      payload: text,
    });
    return {
      status: response.statusCode,
      headers: response.headers,
      body: JSON.parse(response.body),
      raw: response.body,
    };
  }

  async function rows(path: string): Promise<Row[]> {
    const reply = await call("GET", path);
    expect(reply.status, reply.raw).toBe(200);
    return (reply.body as { d: Row[] }).d;
  }

  async function one(resource: string, id: number): Promise<Row | undefined> {
    const found = await rows(`/${resource}(${id})`);
    expect(found.length).toBeLessThanOrEqual(1);
    return found[0];
  }

  /** The rows of `resource` with these ids, as a GET shows them, by id. */
  async function snapshot(resource: string, ids: readonly number[]): Promise<Row[]> {
    if (ids.length === 0) return [];
    return rows(`/${resource}?$filter=id in (${ids.join(", ")})&$orderby=id`);
  }

  function expectOk(reply: Reply, affected: number): void {
    expect(reply.status, reply.raw).toBe(200);
    expect(reply.body, reply.raw).toBe("OK");
    expect(reply.raw).toBe('"OK"');
    expect(reply.headers["x-affected-rows"], reply.raw).toBe(String(affected));
  }

  function expectError(reply: Reply, status: number, message: RegExp): void {
    expect(reply.status, reply.raw).toBe(status);
    expect(typeof reply.body, reply.raw).toBe("string");
    expect(reply.body).toMatch(message);
  }

  function expectCreated(reply: Reply, resource: string): Row {
    expect(reply.status, reply.raw).toBe(201);
    const entity = reply.body as Row;
    expect(typeof entity.id, reply.raw).toBe("number");
    expect(reply.headers.location).toBe(`/v6/${resource}(${entity.id})`);
    return entity;
  }

  /** A POST's body is the entity exactly as a GET by key then returns it. */
  async function expectCreatedAsRead(reply: Reply, resource: string): Promise<Row> {
    const entity = expectCreated(reply, resource);
    expect(entity).toEqual(await one(resource, entity.id as number));
    return entity;
  }

  async function billingEventsOf(ids: readonly number[]): Promise<Row[]> {
    return rows(`/billing_event?$filter=device in (${ids.join(", ")})&$orderby=device`);
  }

  /** A small fleet setup most tests start from. */
  async function basicWorld(label: string) {
    const w = world(label);
    const dtA = await w.deviceType("aarch64");
    const dtA2 = await w.deviceType("aarch64");
    const dtB = await w.deviceType("armv7hf");
    const org = await w.organization();
    const fleet = await w.fleet(org, dtA);
    const other = await w.fleet(org, dtA2);
    const armFleet = await w.fleet(org, dtB);
    const release = await w.release(fleet, { created_at: new Date("2025-01-01T00:00:00Z") });
    const otherRelease = await w.release(other, { created_at: new Date("2025-01-01T00:00:00Z") });
    return { w, dtA, dtA2, dtB, org, fleet, other, armFleet, release, otherRelease };
  }

  // ---- POST ------------------------------------------------------------------------------------------

  describe("POST", () => {
    it("creates a device: 201, Location, the entity as a GET by key shows it, server-filled fields", async () => {
      const { fleet, dtA } = await basicWorld("postdevice");
      const reply = await call("POST", "/device", { belongs_to__application: fleet.id });
      const device = await expectCreatedAsRead(reply, "device");
      expect(device.uuid).toMatch(HEX32);
      expect(device.device_name).toBe((device.uuid as string).slice(0, 7));
      expect(device.belongs_to__application).toEqual(link(fleet.id));
      // a device takes its fleet's device type unless told otherwise
      expect(device.is_of__device_type).toEqual(link(dtA.id));
      expect(device.is_active).toBe(true);
      expect(device.is_online).toBe(false);
      expect(device.should_be_running__release).toBeNull();
      expect(typeof device.actor).toBe("number");
      expect(Date.now() - Date.parse(device.created_at as string)).toBeLessThan(60_000);
      expect(device.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    it("creates devices with the writable fields set, and two generated uuids differ", async () => {
      const { w, fleet, dtA2, release } = await basicWorld("postdevicefull");
      const uuid = w.uuid();
      const reply = await call("POST", "/device", {
        belongs_to__application: fleet.id,
        uuid,
        device_name: "named",
        note: "a note",
        is_of__device_type: dtA2.id,
        should_be_running__release: release.id,
        is_active: false,
      });
      const device = await expectCreatedAsRead(reply, "device");
      expect(device).toMatchObject({
        uuid,
        device_name: "named",
        note: "a note",
        is_of__device_type: link(dtA2.id),
        should_be_running__release: link(release.id),
        is_active: false,
      });
      const long = `${w.uuid()}${w.uuid().slice(0, 30)}`;
      const longReply = await call("POST", "/device", { belongs_to__application: fleet.id, uuid: long });
      expect((await expectCreatedAsRead(longReply, "device")).uuid).toBe(long);
      const a = expectCreated(await call("POST", "/device", { belongs_to__application: fleet.id }), "device");
      const b = expectCreated(await call("POST", "/device", { belongs_to__application: fleet.id }), "device");
      expect(a.uuid).not.toBe(b.uuid);
    });

    it.each([
      ["uppercase hex", "ABCDEF0123456789ABCDEF0123456789"],
      ["31 characters", "0123456789abcdef0123456789abcde"],
      ["33 characters", "0123456789abcdef0123456789abcdef0"],
      ["not hex", "0123456789abcdef0123456789abcdeg"],
      ["empty", ""],
    ])("refuses a device uuid that is %s (400, nothing created)", async (_case, uuid) => {
      const { fleet } = await basicWorld("baduuid");
      expectError(await call("POST", "/device", { belongs_to__application: fleet.id, uuid }), 400, /uuid/);
      expect(await rows(`/device?$filter=belongs_to__application eq ${fleet.id}`)).toEqual([]);
    });

    it("creates a fleet from a device type slug: slug = lower(handle/app_name), tracking by default", async () => {
      const w = world("postfleet");
      const dt = await w.deviceType("amd64");
      const org = await w.organization(w.name("Mixed-CASE.Org"));
      const reply = await call("POST", "/application", {
        app_name: "My Fleet",
        device_type: dt.slug,
        organization: org.id,
      });
      const fleet = await expectCreatedAsRead(reply, "application");
      expect(fleet).toMatchObject({
        app_name: "My Fleet",
        slug: `${org.handle}/my fleet`.toLowerCase(),
        device_type: dt.slug,
        is_for__device_type: link(dt.id),
        organization: link(org.id),
        should_track_latest_release: true,
        should_be_running__release: null,
        commit: null,
        is_public: false,
        depends_on__application: null,
      });
      expect(typeof fleet.actor).toBe("number");
    });

    it("creates a fleet from is_for__device_type, with should_track_latest_release as a string", async () => {
      const w = world("postfleet2");
      const dt = await w.deviceType("amd64");
      const org = await w.organization();
      const dependency = await w.fleet(org, dt);
      const off = await call("POST", "/application", {
        app_name: "off",
        is_for__device_type: dt.id,
        organization: org.id,
        should_track_latest_release: "false",
        is_public: true,
        depends_on__application: dependency.id,
      });
      expect(await expectCreatedAsRead(off, "application")).toMatchObject({
        device_type: dt.slug,
        should_track_latest_release: false,
        is_public: true,
        depends_on__application: link(dependency.id),
      });
      const on = await call("POST", "/application", {
        app_name: "on",
        device_type: dt.slug,
        organization: org.id,
        should_track_latest_release: "true",
      });
      expect(await expectCreatedAsRead(on, "application")).toMatchObject({
        should_track_latest_release: true,
      });
      const yes = await call("POST", "/application", {
        app_name: "yes",
        device_type: dt.slug,
        organization: org.id,
        should_track_latest_release: "yes",
      });
      expectError(yes, 400, /should_track_latest_release/);
    });

    it.each([
      ["without a device type", { app_name: "x", organization: "ORG" }, /device_type/],
      ["without an organization", { app_name: "x", device_type: "SLUG" }, /organization/],
      ["without app_name", { device_type: "SLUG", organization: "ORG" }, /app_name/],
      [
        "with an unknown device type slug",
        { app_name: "x", device_type: "no-such-type", organization: "ORG" },
        /device type/,
      ],
      [
        "with app_name null",
        { app_name: null, device_type: "SLUG", organization: "ORG" },
        /"app_name" cannot be null/,
      ],
    ])("refuses a fleet %s (400, nothing created)", async (_case, template, message) => {
      const w = world("badfleet");
      const dt = await w.deviceType("amd64");
      const org = await w.organization();
      const body = Object.fromEntries(
        Object.entries(template).map(([key, value]) => [
          key,
          value === "SLUG" ? dt.slug : value === "ORG" ? org.id : value,
        ]),
      );
      expectError(await call("POST", "/application", body), 400, message);
      expect(await rows(`/application?$filter=organization eq ${org.id}`)).toEqual([]);
    });

    it("creates every other writable resource, each answered as a GET by key shows it", async () => {
      const { w, fleet } = await basicWorld("postothers");
      const device = await w.device(fleet);
      const commit = w.commit();
      const release = await expectCreatedAsRead(
        await call("POST", "/release", {
          belongs_to__application: fleet.id,
          commit,
          status: "running",
          source: "local",
          is_final: false,
          semver: "1.2.3",
          note: "n",
          start_timestamp: "2025-05-01T10:00:00+02:00",
        }),
        "release",
      );
      expect(release).toMatchObject({
        belongs_to__application: link(fleet.id),
        commit,
        status: "running",
        source: "local",
        is_final: false,
        is_invalidated: false,
        semver: "1.2.3",
        start_timestamp: "2025-05-01T08:00:00.000Z",
        end_timestamp: null,
      });
      expect(
        await expectCreatedAsRead(
          await call("POST", "/device_tag", { device: device.id, tag_key: "k", value: "v" }),
          "device_tag",
        ),
      ).toMatchObject({ device: link(device.id), tag_key: "k", value: "v" });
      expect(
        await expectCreatedAsRead(
          await call("POST", "/application_tag", { application: fleet.id, tag_key: "k", value: "v" }),
          "application_tag",
        ),
      ).toMatchObject({ application: link(fleet.id), tag_key: "k", value: "v" });
      expect(
        await expectCreatedAsRead(
          await call("POST", "/device_environment_variable", { device: device.id, name: "A_1", value: "1" }),
          "device_environment_variable",
        ),
      ).toMatchObject({ device: link(device.id), name: "A_1", value: "1" });
      expect(
        await expectCreatedAsRead(
          await call("POST", "/application_environment_variable", {
            application: fleet.id,
            name: "_B",
            value: "",
          }),
          "application_environment_variable",
        ),
      ).toMatchObject({ application: link(fleet.id), name: "_B", value: "" });
      const handle = w.name("new-org");
      expect(
        await expectCreatedAsRead(await call("POST", "/organization", { name: "N", handle }), "organization"),
      ).toMatchObject({ name: "N", handle });
    });

    it.each([
      ["/device_environment_variable", "device", { name: "1ABC", value: "x" }, /name/],
      ["/device_environment_variable", "device", { name: "A-B", value: "x" }, /name/],
      ["/application_environment_variable", "application", { name: "has space", value: "x" }, /name/],
      ["/device_tag", "device", { tag_key: "  ", value: "x" }, /tag_key/],
      ["/application_tag", "application", { tag_key: "", value: "x" }, /tag_key/],
    ])("POST %s refuses a bad name (%s)", async (path, parent, body, message) => {
      const { w, fleet } = await basicWorld("badnames");
      const device = await w.device(fleet);
      const reply = await call("POST", path, {
        [parent]: parent === "device" ? device.id : fleet.id,
        ...body,
      });
      expectError(reply, 400, message);
    });

    it("refuses an organization handle that is not a handle", async () => {
      expectError(await call("POST", "/organization", { name: "x", handle: "-bad" }), 400, /handle/);
      expectError(await call("POST", "/organization", { name: "x", handle: "a b" }), 400, /handle/);
    });

    it("refuses a POST with a key or query options, and POSTs to read-only resources", async () => {
      const { fleet } = await basicWorld("postforms");
      expect((await call("POST", "/device(1)", { belongs_to__application: fleet.id })).status).toBe(400);
      expect((await call("POST", "/device?$top=1", { belongs_to__application: fleet.id })).status).toBe(400);
      expect((await call("POST", "/device/$count", { belongs_to__application: fleet.id })).status).toBe(400);
      expectError(await call("POST", "/device_type", { slug: "x" }), 400, /device_type/);
      expectError(await call("POST", "/user", { username: "x" }), 400, /user/);
      expectError(await call("POST", "/billing_event", { kind: "deactivation" }), 400, /billing_event/);
      expect(await rows(`/device?$filter=belongs_to__application eq ${fleet.id}`)).toEqual([]);
    });
  });

  // ---- validation ------------------------------------------------------------------------------------

  describe("validation", () => {
    type Case = readonly [
      name: string,
      method: "POST" | "PATCH" | "PUT",
      path: (ids: { device: number; fleet: number; tag: number; release: number }) => string,
      body: unknown,
      message: RegExp,
    ];
    const device = (ids: { device: number }) => `/device(${ids.device})`;
    const cases: Case[] = [
      ["body is an array", "PATCH", device, [{ note: "x" }], /JSON object/],
      ["body is a string", "PATCH", device, "note", /JSON object/],
      ["body is a number", "POST", () => "/device", 5, /JSON object/],
      ["body is null", "POST", () => "/device", null, /JSON object/],
      ["body is an array (POST)", "POST", () => "/device", [], /JSON object/],
      ["body is an array (PUT)", "PUT", device, [], /JSON object/],
      ["unknown field", "PATCH", device, { colour: "red" }, /colour/],
      ["unknown field on create", "POST", () => "/device", { colour: "red" }, /colour/],
      ["server field is_online", "PATCH", device, { is_online: true }, /is_online/],
      ["created_at on PATCH", "PATCH", device, { created_at: "2025-01-01T00:00:00Z" }, /created_at/],
      ["actor on PATCH", "PATCH", device, { actor: 1 }, /actor/],
      ["id on PATCH", "PATCH", device, { id: 5 }, /id/],
      ["uuid (create only) on PATCH", "PATCH", device, { uuid: "0".repeat(32) }, /uuid/],
      ["is_of__device_type on PATCH", "PATCH", device, { is_of__device_type: 1 }, /is_of__device_type/],
      ["created_at on POST", "POST", () => "/device", { created_at: "2025-01-01T00:00:00Z" }, /created_at/],
      ["actor on POST", "POST", () => "/device", { actor: 1 }, /actor/],
      ["fleet slug", "PATCH", (ids) => `/application(${ids.fleet})`, { slug: "a/b" }, /slug/],
      ["fleet actor", "PATCH", (ids) => `/application(${ids.fleet})`, { actor: 1 }, /actor/],
      [
        "fleet created_at",
        "POST",
        () => "/application",
        { created_at: "2025-01-01T00:00:00Z" },
        /created_at/,
      ],
      ["release commit on PATCH", "PATCH", (ids) => `/release(${ids.release})`, { commit: "abc" }, /commit/],
      ["tag device on PATCH", "PATCH", (ids) => `/device_tag(${ids.tag})`, { device: 1 }, /device/],
      ["device_name a number", "PATCH", device, { device_name: 5 }, /device_name/],
      ["note an object", "PATCH", device, { note: { a: 1 } }, /note/],
      ["is_active a string", "PATCH", device, { is_active: "no" }, /is_active/],
      ["is_active a number", "PATCH", device, { is_active: 0 }, /is_active/],
      ["link a string", "PATCH", device, { belongs_to__application: "1" }, /belongs_to__application/],
      ["link a fraction", "PATCH", device, { belongs_to__application: 1.5 }, /belongs_to__application/],
      [
        "pin an object",
        "PATCH",
        device,
        { should_be_running__release: { __id: 1 } },
        /should_be_running__release/,
      ],
      ["is_public a number", "PATCH", (ids) => `/application(${ids.fleet})`, { is_public: 1 }, /is_public/],
      [
        "timestamp not a date",
        "PATCH",
        (ids) => `/release(${ids.release})`,
        { end_timestamp: "soon" },
        /end_timestamp/,
      ],
      [
        "an integer beyond int4",
        "PATCH",
        device,
        { belongs_to__application: 2 ** 31 },
        /belongs_to__application/,
      ],
      [
        "a fleet link beyond int4",
        "PATCH",
        (ids) => `/application(${ids.fleet})`,
        { depends_on__application: -(2 ** 40) },
        /depends_on__application/,
      ],
      [
        "timestamp a number",
        "PATCH",
        (ids) => `/release(${ids.release})`,
        { end_timestamp: 1700000000000 },
        /end_timestamp/,
      ],
      [
        "timestamp not ISO 8601 ('March 5')",
        "PATCH",
        (ids) => `/release(${ids.release})`,
        { end_timestamp: "March 5" },
        /end_timestamp/,
      ],
      [
        "timestamp not ISO 8601 ('1')",
        "PATCH",
        (ids) => `/release(${ids.release})`,
        { end_timestamp: "1" },
        /end_timestamp/,
      ],
      [
        "should_track_latest_release null",
        "PATCH",
        (ids) => `/application(${ids.fleet})`,
        { should_track_latest_release: null },
        /"should_track_latest_release" cannot be null/,
      ],
      [
        "belongs_to__application null on create",
        "POST",
        () => "/device",
        { belongs_to__application: null },
        /"belongs_to__application" cannot be null/,
      ],
      ["device_name null", "PATCH", device, { device_name: null }, /^"device_name" cannot be null$/],
      ["is_active null", "PATCH", device, { is_active: null }, /^"is_active" cannot be null$/],
      [
        "belongs_to__application null",
        "PATCH",
        device,
        { belongs_to__application: null },
        /^"belongs_to__application" cannot be null$/,
      ],
      [
        "app_name null",
        "PATCH",
        (ids) => `/application(${ids.fleet})`,
        { app_name: null },
        /^"app_name" cannot be null$/,
      ],
      [
        "device_type null",
        "PATCH",
        (ids) => `/application(${ids.fleet})`,
        { device_type: null },
        /"device_type" cannot be null/,
      ],
      [
        "tag value null",
        "PATCH",
        (ids) => `/device_tag(${ids.tag})`,
        { value: null },
        /^"value" cannot be null$/,
      ],
      [
        "release status null",
        "PATCH",
        (ids) => `/release(${ids.release})`,
        { status: null },
        /^"status" cannot be null$/,
      ],
      ["empty PATCH", "PATCH", device, {}, /./],
      ["empty PATCH on a collection", "PATCH", (ids) => `/device?$filter=id eq ${ids.device}`, {}, /./],
      ["empty PUT", "PUT", device, {}, /./],
      ["device without fleet", "POST", () => "/device", { device_name: "x" }, /belongs_to__application/],
      ["tag without value", "POST", () => "/device_tag", { tag_key: "k" }, /value|device/],
      [
        "release without commit",
        "POST",
        () => "/release",
        { status: "success" },
        /commit|belongs_to__application/,
      ],
    ];

    it.each(cases)("400 when %s, and nothing changes", async (_name, method, path, body, message) => {
      const { w, fleet, release } = await basicWorld("validation");
      const target = await w.device(fleet, { note: "kept" });
      const tag = await w.deviceTag(target, "k", "v");
      const ids = { device: target.id, fleet: fleet.id, tag: tag.id, release: release.id };
      const before = {
        devices: await rows(`/device?$filter=belongs_to__application eq ${fleet.id}&$orderby=id`),
        fleet: await one("application", fleet.id),
        tag: await one("device_tag", tag.id),
        release: await one("release", release.id),
      };
      const reply = await call(method, path(ids), body);
      expectError(reply, 400, message);
      expect({
        devices: await rows(`/device?$filter=belongs_to__application eq ${fleet.id}&$orderby=id`),
        fleet: await one("application", fleet.id),
        tag: await one("device_tag", tag.id),
        release: await one("release", release.id),
      }).toEqual(before);
    });

    it("400 when the body is not JSON at all", async () => {
      const { w, fleet } = await basicWorld("notjson");
      const target = await w.device(fleet);
      expect((await callRaw("PATCH", `/device(${target.id})`, "{note:")).status).toBe(400);
      expect((await callRaw("POST", "/device", "[1]")).status).toBe(400);
    });
  });

  // ---- request forms ---------------------------------------------------------------------------------

  describe("PATCH, PUT and DELETE: request forms and x-affected-rows", () => {
    it("PATCH by id, by uuid, by @alias, by slug and by a composite key", async () => {
      const { w, org, fleet } = await basicWorld("forms");
      const [a, b, c] = [await w.device(fleet), await w.device(fleet), await w.device(fleet)];
      const tag = await w.deviceTag(a, "k", "v");
      expectOk(await call("PATCH", `/device(${a.id})`, { note: "by id" }), 1);
      expectOk(await call("PATCH", `/device(uuid='${b.uuid}')`, { note: "by uuid" }), 1);
      expectOk(await call("PATCH", `/device(@id)?@id=${c.id}`, { note: "by alias" }), 1);
      expectOk(
        await call("PATCH", `/application(slug='${encodeURIComponent(fleet.slug)}')`, { is_public: true }),
        1,
      );
      expectOk(
        await call("PATCH", `/device_tag(device=${a.id},tag_key='k')`, { value: "by composite key" }),
        1,
      );
      const devices = await snapshot("device", [a.id, b.id, c.id]);
      expect(devices.map((d) => d.note)).toEqual(["by id", "by uuid", "by alias"]);
      expect((await one("application", fleet.id))?.is_public).toBe(true);
      expect((await one("device_tag", tag.id))?.value).toBe("by composite key");
      expect(org.id).toBeGreaterThan(0);
    });

    it("DELETE by id, by uuid and by a composite key; the row is gone", async () => {
      const { w, fleet } = await basicWorld("deleteforms");
      const [a, b, keep] = [await w.device(fleet), await w.device(fleet), await w.device(fleet)];
      const tag = await w.deviceTag(keep, "k", "v");
      expectOk(await call("DELETE", `/device(${a.id})`), 1);
      expectOk(await call("DELETE", `/device(uuid='${b.uuid}')`), 1);
      expectOk(await call("DELETE", `/device_tag(device=${keep.id},tag_key='k')`), 1);
      expect(await one("device", a.id)).toBeUndefined();
      expect(await one("device", b.id)).toBeUndefined();
      expect(await one("device_tag", tag.id)).toBeUndefined();
      expect(await one("device", keep.id)).toBeDefined();
    });

    it('x-affected-rows is 0 (200 "OK") for keys and filters that match nothing', async () => {
      const { fleet } = await basicWorld("nomatch");
      const missing = "f".repeat(32);
      expectOk(await call("PATCH", "/device(999999)", { note: "x" }), 0);
      expectOk(await call("PUT", "/device(999999)", { device_name: "x" }), 0);
      expectOk(await call("DELETE", "/device(999999)"), 0);
      expectOk(await call("PATCH", `/device(uuid='${missing}')`, { note: "x" }), 0);
      expectOk(await call("PUT", `/device(uuid='${missing}')`, { device_name: "x" }), 0);
      expectOk(await call("DELETE", `/device(uuid='${missing}')`), 0);
      expectOk(
        await call("PATCH", `/device?$filter=belongs_to__application eq ${fleet.id}`, { note: "x" }),
        0,
      );
      expectOk(await call("DELETE", `/device?$filter=belongs_to__application eq ${fleet.id}`), 0);
    });

    it("x-affected-rows counts every row of a bulk PATCH and DELETE", async () => {
      const { w, fleet } = await basicWorld("counts");
      const devices = [];
      for (let i = 0; i < 7; i++) devices.push(await w.device(fleet));
      expectOk(
        await call("PATCH", `/device?$filter=belongs_to__application eq ${fleet.id}`, { note: "all" }),
        7,
      );
      const three = devices.slice(0, 3).map((d) => d.id);
      expectOk(await call("DELETE", `/device?$filter=id in (${three.join(", ")})`), 3);
      expect((await rows(`/device?$filter=belongs_to__application eq ${fleet.id}`)).length).toBe(4);
    });

    it.each([
      ["PATCH", { note: "x" }],
      ["DELETE", undefined],
    ] as const)("%s on a collection without $filter is a 400 and changes nothing", async (method, body) => {
      const count = (await call("GET", "/device/$count")).body;
      expect(count).toEqual({ d: expect.any(Number) });
      expectError(await call(method, "/device", body), 400, /\$filter/);
      expect((await call("GET", "/device/$count")).body).toEqual(count);
    });

    it("PUT needs a key; PATCH, PUT and DELETE take no query option but $filter", async () => {
      const { w, fleet } = await basicWorld("putforms");
      const device = await w.device(fleet, { note: "kept" });
      expect((await call("PUT", `/device?$filter=id eq ${device.id}`, { device_name: "x" })).status).toBe(
        400,
      );
      expect((await call("PUT", "/device", { device_name: "x" })).status).toBe(400);
      expect((await call("PATCH", `/device?$filter=id eq ${device.id}&$top=1`, { note: "x" })).status).toBe(
        400,
      );
      expect((await call("PATCH", `/device(${device.id})?$select=id`, { note: "x" })).status).toBe(400);
      expect((await call("DELETE", `/device?$filter=id eq ${device.id}&$orderby=id`)).status).toBe(400);
      expect((await call("DELETE", "/device/$count")).status).toBe(400);
      expect((await one("device", device.id))?.note).toBe("kept");
    });

    it("PUT replaces the writable fields: left-out nullable ones become null, defaulted ones their default", async () => {
      const { w, fleet, release } = await basicWorld("put");
      const device = await w.device(fleet, { note: "old", pin: release, is_active: false, name: "old-name" });
      const before = (await one("device", device.id)) as Row;
      expectOk(await call("PUT", `/device(${device.id})`, { device_name: "new-name" }), 1);
      const after = (await one("device", device.id)) as Row;
      expect(after).toEqual({
        ...before,
        device_name: "new-name",
        note: null,
        should_be_running__release: null,
        is_active: true,
      });
      // by an alternate key too
      expectOk(await call("PUT", `/device(uuid='${device.uuid}')`, { device_name: "n2", note: "kept" }), 1);
      expect(await one("device", device.id)).toEqual({ ...after, device_name: "n2", note: "kept" });
    });

    it("PUT on a release restores its defaults and nulls", async () => {
      const { w, fleet } = await basicWorld("putrelease");
      const release = await w.release(fleet, { status: "failed", is_final: false, is_invalidated: true });
      await w.db.prisma.release.update({
        where: { id: release.id },
        data: { note: "n", semver: "9.9.9", is_passing_tests: false, end_timestamp: new Date() },
      });
      const before = (await one("release", release.id)) as Row;
      expectOk(await call("PUT", `/release(${release.id})`, { status: "running" }), 1);
      expect(await one("release", release.id)).toEqual({
        ...before,
        status: "running",
        note: null,
        semver: "0.0.0",
        is_final: true,
        is_invalidated: false,
        is_passing_tests: true,
        end_timestamp: null,
      });
    });

    it("PUT on a fleet that restores tracking (the default) moves it to its latest release", async () => {
      const { w, org, fleet, dtA } = await basicWorld("putfleet");
      const older = await w.release(fleet, { created_at: new Date("2025-03-01T00:00:00Z") });
      const newest = await w.release(fleet, { created_at: new Date("2025-04-01T00:00:00Z") });
      const dependency = await w.fleet(org, dtA);
      await w.db.prisma.application.update({
        where: { id: fleet.id },
        data: {
          should_track_latest_release: false,
          should_be_running__release: older.id,
          is_public: true,
          depends_on__application: dependency.id,
        },
      });
      expectOk(await call("PUT", `/application(${fleet.id})`, { app_name: "put-fleet" }), 1);
      expect(await one("application", fleet.id)).toMatchObject({
        app_name: "put-fleet",
        slug: `${org.handle}/put-fleet`.toLowerCase(),
        is_public: false,
        depends_on__application: null,
        organization: link(org.id),
        is_for__device_type: link(dtA.id),
        should_track_latest_release: true,
        should_be_running__release: link(newest.id),
        commit: newest.commit,
      });
    });
  });

  // ---- dry run ---------------------------------------------------------------------------------------

  describe("x-dry-run", () => {
    const dry = { "x-dry-run": "true" };

    it("a bulk PATCH reports exactly its target rows with before/after and changes nothing", async () => {
      const { w, fleet } = await basicWorld("drypatch");
      const devices: Device[] = [];
      for (let i = 0; i < 6; i++) devices.push(await w.device(fleet, { note: i % 2 ? `n${i}` : null }));
      const all = devices.map((d) => d.id);
      const before = await snapshot("device", all);
      // targets: odd notes, or the first device
      const targets = devices.filter((d, i) => d.note !== null || i === 0).sort(byId);
      const filter = `belongs_to__application eq ${fleet.id} and (note ne null or id eq ${devices[0]?.id})`;
      const reply = await call("PATCH", `/device?$filter=${filter}`, { note: "dry" }, dry);
      expect(reply.status, reply.raw).toBe(200);
      expect(reply.headers["x-affected-rows"]).toBe(String(targets.length));
      const report = reply.body as { dryRun: boolean; affected: number; changes: Row[] };
      expect({
        ...report,
        changes: [...report.changes].sort((a, b) => (a.id as number) - (b.id as number)),
      }).toEqual({
        dryRun: true,
        affected: targets.length,
        changes: targets.map((d) => ({ id: d.id, before: { note: d.note }, after: { note: "dry" } })),
      });
      expect(await snapshot("device", all)).toEqual(before);
    });

    it("a PUT reports the replaced fields and changes nothing", async () => {
      const { w, fleet, release } = await basicWorld("dryput");
      const device = await w.device(fleet, { note: "n", pin: release, name: "name" });
      const before = await one("device", device.id);
      const reply = await call("PUT", `/device(${device.id})`, { device_name: "other" }, dry);
      expect(reply.status, reply.raw).toBe(200);
      expect(reply.headers["x-affected-rows"]).toBe("1");
      expect(reply.body).toEqual({
        dryRun: true,
        affected: 1,
        changes: [
          {
            id: device.id,
            before: { device_name: "name", note: "n", should_be_running__release: link(release.id) },
            after: { device_name: "other", note: null, should_be_running__release: null },
          },
        ],
      });
      expect(await one("device", device.id)).toEqual(before);
    });

    it("a bulk DELETE reports each target row as a GET shows it and deletes nothing", async () => {
      const { w, fleet } = await basicWorld("drydelete");
      const devices: Device[] = [];
      for (let i = 0; i < 5; i++) devices.push(await w.device(fleet, { note: i < 3 ? "go" : "stay" }));
      await w.deviceTag(devices[0] as Device, "k", "v");
      const all = devices.map((d) => d.id);
      const before = await snapshot("device", all);
      const targets = before.filter((d) => d.note === "go");
      const reply = await call(
        "DELETE",
        `/device?$filter=belongs_to__application eq ${fleet.id} and note eq 'go'`,
        undefined,
        dry,
      );
      expect(reply.status, reply.raw).toBe(200);
      expect(reply.headers["x-affected-rows"]).toBe("3");
      const report = reply.body as { changes: Row[] };
      expect({
        ...report,
        changes: [...report.changes].sort((a, b) => (a.id as number) - (b.id as number)),
      }).toEqual({
        dryRun: true,
        affected: 3,
        changes: targets.map((d) => ({ id: d.id, before: d, after: null })),
      });
      expect(await snapshot("device", all)).toEqual(before);
      expect((await rows(`/device_tag?$filter=device eq ${devices[0]?.id}`)).length).toBe(1);
    });

    it("a dry-run deactivation records no billing event", async () => {
      const { w, fleet } = await basicWorld("drydeactivate");
      const device = await w.device(fleet);
      const reply = await call("PATCH", `/device(${device.id})`, { is_active: false }, dry);
      expect(reply.status, reply.raw).toBe(200);
      expect(reply.body).toEqual({
        dryRun: true,
        affected: 1,
        changes: [{ id: device.id, before: { is_active: true }, after: { is_active: false } }],
      });
      expect((await one("device", device.id))?.is_active).toBe(true);
      expect(await billingEventsOf([device.id])).toEqual([]);
    });

    it("a dry run that matches nothing reports nothing; one a rule refuses is the rule's error", async () => {
      const { w, fleet, otherRelease } = await basicWorld("drymisc");
      const device = await w.device(fleet);
      const none = await call("PATCH", "/device(999999)", { note: "x" }, dry);
      expect(none.status).toBe(200);
      expect(none.headers["x-affected-rows"]).toBe("0");
      expect(none.body).toEqual({ dryRun: true, affected: 0, changes: [] });
      const refused = await call(
        "PATCH",
        `/device(${device.id})`,
        { should_be_running__release: otherRelease.id },
        dry,
      );
      expectError(refused, 400, /should_be_running__release/);
      const deleteNone = await call("DELETE", "/device(999999)", undefined, dry);
      expect(deleteNone.body).toEqual({ dryRun: true, affected: 0, changes: [] });
    });

    it("a dry-run fleet commit change reports the new target and changes nothing", async () => {
      const { w, fleet, release } = await basicWorld("drycommit");
      const older = await w.release(fleet, { created_at: new Date("2024-01-01T00:00:00Z") });
      await w.target(fleet, release);
      const before = await one("application", fleet.id);
      const reply = await call("PATCH", `/application(${fleet.id})`, { commit: older.commit }, dry);
      expect(reply.status, reply.raw).toBe(200);
      expect(reply.body).toEqual({
        dryRun: true,
        affected: 1,
        changes: [
          {
            id: fleet.id,
            before: {
              should_track_latest_release: true,
              should_be_running__release: link(release.id),
              commit: release.commit,
            },
            after: {
              should_track_latest_release: false,
              should_be_running__release: link(older.id),
              commit: older.commit,
            },
          },
        ],
      });
      expect(await one("application", fleet.id)).toEqual(before);
    });
  });

  // ---- bulk writes, checked row by row ---------------------------------------------------------------

  describe("bulk PATCH and DELETE change exactly the rows their $filter matches", () => {
    /** Two organizations, three fleets (two of them with the same app_name), tagged devices. */
    async function taggedWorld(label: string) {
      const w = world(label);
      const dt = await w.deviceType("aarch64");
      const [orgA, orgB] = [await w.organization(), await w.organization()];
      const app_name = w.name("alpha");
      const fleets = [
        await w.fleet(orgA, dt, { app_name }),
        await w.fleet(orgB, dt, { app_name }),
        await w.fleet(orgA, dt),
      ];
      const devices: Device[] = [];
      const notes = [null, "x", "y", null, "", "x"];
      for (const [f, fleet] of fleets.entries()) {
        for (let i = 0; i < 7 - f; i++) {
          devices.push(
            await w.device(fleet, { note: notes[(i + f) % notes.length] ?? null, name: `dev-${f}-${i}` }),
          );
        }
      }
      for (const [i, device] of devices.entries()) {
        if (i % 2 === 0) await w.deviceTag(device, "zone", `z${i % 3}`);
        if (i % 3 === 0) await w.deviceTag(device, "other", i % 2 ? "hot" : "cold");
        if (i % 5 === 1) await w.deviceTag(device, "hot", "hot");
      }
      const fleetRows = await snapshot(
        "application",
        fleets.map((f) => f.id),
      );
      const deviceRows = await snapshot(
        "device",
        devices.map((d) => d.id),
      );
      const tagRows = await rows(
        `/device_tag?$filter=device in (${devices.map((d) => d.id).join(", ")})&$orderby=id`,
      );
      const appNameOf = (d: Row) =>
        fleetRows.find((f) => f.id === (d.belongs_to__application as { __id: number }).__id)?.app_name;
      const tagsOf = (d: Row) => tagRows.filter((t) => (t.device as { __id: number }).__id === d.id);
      return { w, app_name, fleets, devices, deviceRows, tagRows, appNameOf, tagsOf };
    }

    it("DELETE with not, in, any and a path at once", async () => {
      const { app_name, devices, deviceRows, tagRows, appNameOf, tagsOf } = await taggedWorld("bulkdelete");
      const matches = (d: Row) => appNameOf(d) === app_name && tagsOf(d).some((t) => t.tag_key === "zone");
      // exclude one device that would match and one that would not
      const excluded = [
        deviceRows.find(matches)?.id as number,
        deviceRows.find((d) => !matches(d))?.id as number,
      ];
      const expected = deviceRows.filter((d) => !excluded.includes(d.id as number) && matches(d));
      // the data makes every part of the filter matter
      expect(expected.length).toBeGreaterThan(2);
      expect(
        deviceRows.filter((d) => appNameOf(d) === app_name && !tagsOf(d).some((t) => t.tag_key === "zone"))
          .length,
      ).toBeGreaterThan(0);
      expect(new Set(expected.map((d) => (d.belongs_to__application as { __id: number }).__id)).size).toBe(2);

      const filter = `not (id in (${excluded.join(", ")})) and belongs_to__application/app_name eq '${app_name}' and device_tag/any(t:t/tag_key eq 'zone')`;
      expectOk(await call("DELETE", `/device?$filter=${filter}`), expected.length);

      const gone = new Set(expected.map((d) => d.id));
      for (const device of deviceRows) {
        const now = await one("device", device.id as number);
        if (gone.has(device.id)) expect(now, `device ${device.id} should be deleted`).toBeUndefined();
        else expect(now, `device ${device.id} should remain unchanged`).toEqual(device);
      }
      // their tags went with them; the others' tags stay
      const tagsNow = await rows(
        `/device_tag?$filter=device in (${devices.map((d) => d.id).join(", ")})&$orderby=id`,
      );
      expect(tagsNow).toEqual(tagRows.filter((t) => !gone.has((t.device as { __id: number }).__id)));
    });

    it("PATCH with a path, in, not, any and or at once", async () => {
      const { app_name, deviceRows, appNameOf, tagsOf } = await taggedWorld("bulkpatch");
      const names = ["dev-0-1", "dev-1-2"];
      const matches = (d: Row) =>
        appNameOf(d) === app_name &&
        (d.note === null || !names.includes(d.device_name as string)) &&
        tagsOf(d).some((t) => t.value === "hot" || t.value === "z1");
      const expected = deviceRows.filter(matches);
      expect(expected.length).toBeGreaterThan(1);
      expect(expected.length).toBeLessThan(deviceRows.filter((d) => appNameOf(d) === app_name).length);

      const filter = `belongs_to__application/app_name eq '${app_name}' and (note eq null or not (device_name in ('${names.join("', '")}'))) and device_tag/any(t:t/value eq 'hot' or t/value eq 'z1')`;
      expectOk(
        await call("PATCH", `/device?$filter=${filter}`, { note: "patched", is_active: false }),
        expected.length,
      );

      const changed = new Set(expected.map((d) => d.id));
      const now = await snapshot(
        "device",
        deviceRows.map((d) => d.id as number),
      );
      expect(now.map((d) => d.id)).toEqual(deviceRows.map((d) => d.id));
      for (const [i, device] of deviceRows.entries()) {
        const want = changed.has(device.id) ? { ...device, note: "patched", is_active: false } : device;
        expect(now[i], `device ${device.id}`).toEqual(want);
      }
      // one billing event per device the PATCH deactivated
      const events = await billingEventsOf(deviceRows.map((d) => d.id as number));
      expect(events.map((e) => e.device).sort()).toEqual(expected.map((d) => d.id).sort());
    });

    it("bulk PATCH over fixture devices: a path two links deep and a count", async () => {
      // Devices of acme's fleets that have at least one tag: computed from the fixture's rows.
      const acme = fx.organizations.find((o) => o.handle === "acme") as Organization;
      const acmeFleets = fx.applications.filter((a) => a.organization === acme.id).map((a) => a.id);
      const tagged = new Set(fx.deviceTags.map((t) => t.device));
      const expected = fx.devices.filter(
        (d) => acmeFleets.includes(d.belongs_to__application) && tagged.has(d.id),
      );
      expect(expected.length).toBeGreaterThan(1);
      const ids = fx.devices.map((d) => d.id);
      const before = await snapshot("device", ids);
      expectOk(
        await call(
          "PATCH",
          "/device?$filter=belongs_to__application/organization/handle eq 'acme' and device_tag/$count gt 0",
          {
            note: "acme-tagged",
          },
        ),
        expected.length,
      );
      const now = await snapshot("device", ids);
      const changed = new Set(expected.map((d) => d.id));
      for (const [i, device] of before.entries()) {
        expect(now[i], `device ${device.id}`).toEqual(
          changed.has(device.id as number) ? { ...device, note: "acme-tagged" } : device,
        );
      }
      // put the fixture back as it was
      for (const device of expected) {
        await server.test.db.prisma.device.update({ where: { id: device.id }, data: { note: device.note } });
      }
    });
  });

  // ---- atomicity -------------------------------------------------------------------------------------

  describe("a write is all or nothing", () => {
    it("a bulk pin that is valid for only some devices is a 400 and changes no device", async () => {
      const { w, fleet, other, release } = await basicWorld("atomicpin");
      const devices = [
        await w.device(fleet),
        await w.device(other),
        await w.device(fleet),
        await w.device(other),
      ];
      const ids = devices.map((d) => d.id);
      const before = await snapshot("device", ids);
      const reply = await call("PATCH", `/device?$filter=id in (${ids.join(", ")})`, {
        should_be_running__release: release.id,
        note: "pinned",
      });
      expectError(reply, 400, /should_be_running__release/);
      expect(await snapshot("device", ids)).toEqual(before);
    });

    it("a bulk commit that only some fleets have is a 400 and changes no fleet", async () => {
      const { w, fleet, other, release } = await basicWorld("atomiccommit");
      await w.target(fleet, null);
      const before = await snapshot("application", [fleet.id, other.id]);
      const reply = await call("PATCH", `/application?$filter=id in (${fleet.id}, ${other.id})`, {
        commit: release.commit,
      });
      expectError(reply, 400, new RegExp(`${other.id}`));
      expect(await snapshot("application", [fleet.id, other.id])).toEqual(before);
    });

    it("a bulk move where one device has another architecture is a 400 and moves none", async () => {
      const { w, fleet, armFleet, dtA, dtB, other } = await basicWorld("atomicmove");
      const devices = [
        await w.device(armFleet, { deviceType: dtB }),
        await w.device(other, { deviceType: dtA }),
        await w.device(armFleet, { deviceType: dtB }),
      ];
      const ids = devices.map((d) => d.id);
      const before = await snapshot("device", ids);
      const reply = await call("PATCH", `/device?$filter=id in (${ids.join(", ")})`, {
        belongs_to__application: fleet.id,
      });
      expectError(reply, 400, /architecture/);
      expect(await snapshot("device", ids)).toEqual(before);
    });

    it("a database error on one row of a bulk PATCH (a trigger) rolls every row back", async () => {
      const { w, fleet } = await basicWorld("atomictrigger");
      const devices: Device[] = [];
      for (let i = 0; i < 8; i++)
        devices.push(await w.device(fleet, { name: i === 5 ? "boom" : `d${i}`, note: `n${i}` }));
      const ids = devices.map((d) => d.id);
      const before = await snapshot("device", ids);
      await server.test.db.script(`
        CREATE FUNCTION write_test_boom() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.device_name = 'boom' THEN RAISE EXCEPTION 'boom'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER write_test_boom BEFORE UPDATE ON "device" FOR EACH ROW EXECUTE FUNCTION write_test_boom();
      `);
      try {
        const reply = await call("PATCH", `/device?$filter=belongs_to__application eq ${fleet.id}`, {
          note: "crash",
        });
        expect(reply.status, reply.raw).toBeGreaterThanOrEqual(400);
        expect(await snapshot("device", ids)).toEqual(before);
        // the same trigger on a single row
        const single = await call("PATCH", `/device(${devices[5]?.id})`, { note: "crash" });
        expect(single.status, single.raw).toBeGreaterThanOrEqual(400);
        expect(await snapshot("device", ids)).toEqual(before);
        // rows the trigger lets through still work
        expectOk(await call("PATCH", `/device(${devices[0]?.id})`, { note: "fine" }), 1);
      } finally {
        await server.test.db.script(`
          DROP TRIGGER write_test_boom ON "device";
          DROP FUNCTION write_test_boom();
        `);
      }
    });

    it("deleting a device type a fleet uses is a 409", async () => {
      const { w, dtA } = await basicWorld("restrict");
      const unused = await w.deviceType("i386");
      const reply = await call("DELETE", `/device_type(${dtA.id})`);
      expectError(reply, 409, /./);
      expect(await one("device_type", dtA.id)).toBeDefined();
      expectOk(await call("DELETE", `/device_type(${unused.id})`), 1);
      expect(await one("device_type", unused.id)).toBeUndefined();
    });

    it("a bulk DELETE that hits a restricting foreign key partway is a 409 and deletes nothing", async () => {
      const w = world("restrictbulk");
      const first = await w.deviceType("i386");
      const used = await w.deviceType("i386");
      const last = await w.deviceType("i386");
      const org = await w.organization();
      await w.fleet(org, used);
      const ids = [first.id, used.id, last.id];
      const before = await snapshot("device_type", ids);
      const reply = await call("DELETE", `/device_type?$filter=id in (${ids.join(", ")})`);
      expectError(reply, 409, /./);
      expect(await snapshot("device_type", ids)).toEqual(before);
    });

    it("deleting an organization that has fleets is a 409 and deletes nothing", async () => {
      const { w, org, fleet } = await basicWorld("restrictorg");
      await w.device(fleet);
      const reply = await call("DELETE", `/organization(${org.id})`);
      expectError(reply, 409, /./);
      expect(await one("organization", org.id)).toBeDefined();
      expect(await one("application", fleet.id)).toBeDefined();
    });
  });

  // ---- unique keys and foreign keys ------------------------------------------------------------------

  describe("constraint violations", () => {
    it("a unique violation is a 409 whose message contains 'unique', and changes nothing", async () => {
      const { w, org, fleet, other, release } = await basicWorld("unique");
      const device = await w.device(fleet);
      const otherDevice = await w.device(fleet);
      await w.deviceTag(device, "k", "v");
      const tag2 = await w.deviceTag(device, "k2", "v");
      await w.deviceVariable(device, "V", "1");
      await w.fleetTag(fleet, "k", "v");
      await w.fleetVariable(fleet, "V", "1");
      const otherOrg = await w.organization();
      const unique = /unique/i;
      expectError(
        await call("POST", "/device_tag", { device: device.id, tag_key: "k", value: "x" }),
        409,
        unique,
      );
      expectError(await call("PATCH", `/device_tag(${tag2.id})`, { tag_key: "k" }), 409, unique);
      expectError(
        await call("POST", "/application_tag", { application: fleet.id, tag_key: "k", value: "x" }),
        409,
        unique,
      );
      expectError(
        await call("POST", "/device_environment_variable", { device: device.id, name: "V", value: "2" }),
        409,
        unique,
      );
      expectError(
        await call("POST", "/application_environment_variable", {
          application: fleet.id,
          name: "V",
          value: "2",
        }),
        409,
        unique,
      );
      expectError(
        await call("POST", "/device", { belongs_to__application: fleet.id, uuid: otherDevice.uuid }),
        409,
        unique,
      );
      expectError(await call("POST", "/organization", { name: "x", handle: org.handle }), 409, unique);
      expectError(await call("PATCH", `/organization(${otherOrg.id})`, { handle: org.handle }), 409, unique);
      expectError(
        await call("POST", "/release", {
          belongs_to__application: fleet.id,
          commit: release.commit,
          status: "success",
        }),
        409,
        unique,
      );
      // the slug is unique: a second fleet of that name in the organization
      expectError(
        await call("PATCH", `/application(${other.id})`, { app_name: fleet.app_name }),
        409,
        unique,
      );
      expectError(
        await call("POST", "/application", {
          app_name: fleet.app_name.toUpperCase(),
          device_type: "x",
          organization: org.id,
        }),
        400,
        /device type/,
      );
      expect((await one("device_tag", tag2.id))?.tag_key).toBe("k2");
      expect((await one("organization", otherOrg.id))?.handle).toBe(otherOrg.handle);
      expect((await one("application", other.id))?.app_name).toBe(other.app_name);
      expect((await rows(`/device?$filter=belongs_to__application eq ${fleet.id}`)).length).toBe(2);
    });

    it("a fleet renamed into another one's slug (case differs) is a 409", async () => {
      const { w, org, dtA, fleet } = await basicWorld("uniquecase");
      const second = await w.fleet(org, dtA);
      const reply = await call("PATCH", `/application(${second.id})`, {
        app_name: fleet.app_name.toUpperCase(),
      });
      expectError(reply, 409, /unique/i);
      expect((await one("application", second.id))?.app_name).toBe(second.app_name);
    });

    it("a foreign key to a row that does not exist is a 400 naming the field", async () => {
      const { w, fleet, org, dtA } = await basicWorld("fk");
      const device = await w.device(fleet);
      const before = await one("device", device.id);
      const missing = 999_999;
      expectError(
        await call("POST", "/device", { belongs_to__application: missing }),
        400,
        /belongs_to__application/,
      );
      expectError(
        await call("PATCH", `/device(${device.id})`, { belongs_to__application: missing }),
        400,
        /belongs_to__application/,
      );
      expectError(
        await call("PATCH", `/device(${device.id})`, { should_be_running__release: missing }),
        400,
        /should_be_running__release/,
      );
      expectError(
        await call("POST", "/device", { belongs_to__application: fleet.id, is_of__device_type: missing }),
        400,
        /is_of__device_type/,
      );
      expectError(
        await call("POST", "/device_tag", { device: missing, tag_key: "k", value: "v" }),
        400,
        /device/,
      );
      expectError(
        await call("POST", "/release", { belongs_to__application: missing, commit: "c", status: "success" }),
        400,
        /belongs_to__application/,
      );
      expectError(
        await call("POST", "/application", { app_name: "a", device_type: dtA.slug, organization: missing }),
        400,
        /organization/,
      );
      expectError(
        await call("POST", "/application", {
          app_name: "b",
          is_for__device_type: missing,
          organization: org.id,
        }),
        400,
        /is_for__device_type/,
      );
      expectError(
        await call("PATCH", `/application(${fleet.id})`, { depends_on__application: missing }),
        400,
        /depends_on__application/,
      );
      expect(await one("device", device.id)).toEqual(before);
      expect((await rows(`/device?$filter=belongs_to__application eq ${fleet.id}`)).length).toBe(1);
    });
  });

  // ---- rules -----------------------------------------------------------------------------------------

  describe("device rules", () => {
    it("a pin must be a release of the device's own fleet; null unpins", async () => {
      const { w, fleet, release, otherRelease } = await basicWorld("pin");
      const device = await w.device(fleet);
      expectOk(await call("PATCH", `/device(${device.id})`, { should_be_running__release: release.id }), 1);
      expect((await one("device", device.id))?.should_be_running__release).toEqual(link(release.id));
      expectError(
        await call("PATCH", `/device(${device.id})`, { should_be_running__release: otherRelease.id }),
        400,
        /should_be_running__release/,
      );
      expect((await one("device", device.id))?.should_be_running__release).toEqual(link(release.id));
      expectOk(await call("PATCH", `/device(${device.id})`, { should_be_running__release: null }), 1);
      expect((await one("device", device.id))?.should_be_running__release).toBeNull();
      // on create too
      expectError(
        await call("POST", "/device", {
          belongs_to__application: fleet.id,
          should_be_running__release: otherRelease.id,
        }),
        400,
        /should_be_running__release/,
      );
      expect((await rows(`/device?$filter=belongs_to__application eq ${fleet.id}`)).length).toBe(1);
    });

    it("a bulk pin to the fleet's own release pins every device", async () => {
      const { w, fleet, release } = await basicWorld("bulkpin");
      const devices = [await w.device(fleet), await w.device(fleet), await w.device(fleet)];
      expectOk(
        await call("PATCH", `/device?$filter=belongs_to__application eq ${fleet.id}`, {
          should_be_running__release: release.id,
        }),
        3,
      );
      const now = await snapshot(
        "device",
        devices.map((d) => d.id),
      );
      expect(now.map((d) => d.should_be_running__release)).toEqual(devices.map(() => link(release.id)));
    });

    it("moving a device needs a fleet of the same architecture and clears a pin to the old fleet", async () => {
      const { w, fleet, other, armFleet, release, otherRelease } = await basicWorld("move");
      const device = await w.device(fleet, { pin: release });
      const before = (await one("device", device.id)) as Row;
      // aarch64 → armv7hf: refused, nothing changes
      expectError(
        await call("PATCH", `/device(${device.id})`, { belongs_to__application: armFleet.id }),
        400,
        /architecture/,
      );
      expect(await one("device", device.id)).toEqual(before);
      // aarch64 → aarch64 (another device type): moves, the old fleet's pin goes, the device type stays
      expectOk(await call("PATCH", `/device(${device.id})`, { belongs_to__application: other.id }), 1);
      expect(await one("device", device.id)).toEqual({
        ...before,
        belongs_to__application: link(other.id),
        should_be_running__release: null,
      });
      // a move that also pins to the new fleet's release keeps that pin
      const second = await w.device(fleet, { pin: release });
      expectOk(
        await call("PATCH", `/device(${second.id})`, {
          belongs_to__application: other.id,
          should_be_running__release: otherRelease.id,
        }),
        1,
      );
      expect(await one("device", second.id)).toMatchObject({
        belongs_to__application: link(other.id),
        should_be_running__release: link(otherRelease.id),
      });
      // a move that pins to a release of the old fleet is refused
      const third = await w.device(fleet);
      expectError(
        await call("PATCH", `/device(${third.id})`, {
          belongs_to__application: other.id,
          should_be_running__release: release.id,
        }),
        400,
        /should_be_running__release/,
      );
      expect((await one("device", third.id))?.belongs_to__application).toEqual(link(fleet.id));
    });

    it("creating a device in a fleet of another architecture is refused", async () => {
      const { fleet, dtB } = await basicWorld("createarch");
      expectError(
        await call("POST", "/device", { belongs_to__application: fleet.id, is_of__device_type: dtB.id }),
        400,
        /architecture/,
      );
      expect(await rows(`/device?$filter=belongs_to__application eq ${fleet.id}`)).toEqual([]);
    });

    it("a moved device without a pin to the old fleet keeps a null pin; a pin unrelated to the move stays", async () => {
      const { w, fleet, other, otherRelease } = await basicWorld("movekeep");
      const moved = await w.device(fleet);
      expectOk(await call("PATCH", `/device(${moved.id})`, { belongs_to__application: other.id }), 1);
      expect(await one("device", moved.id)).toMatchObject({ should_be_running__release: null });
      // moving a device to the fleet it is already in keeps its pin
      const stay = await w.device(other, { pin: otherRelease });
      expectOk(await call("PATCH", `/device(${stay.id})`, { belongs_to__application: other.id }), 1);
      expect(await one("device", stay.id)).toMatchObject({
        should_be_running__release: link(otherRelease.id),
      });
    });

    it("is_active false only on an offline device, with one billing event per device that was active", async () => {
      const { w, fleet } = await basicWorld("deactivate");
      const online = await w.device(fleet, { is_online: true });
      const offline = await w.device(fleet);
      const alreadyInactive = await w.device(fleet, { is_active: false });
      const offline2 = await w.device(fleet);

      expectError(
        await call("PATCH", `/device(${online.id})`, { is_active: false }),
        400,
        new RegExp(`${online.id}`),
      );
      expect((await one("device", online.id))?.is_active).toBe(true);
      // a bulk deactivation with one online device changes none and bills none
      const all = [online.id, offline.id, alreadyInactive.id, offline2.id];
      const before = await snapshot("device", all);
      expectError(
        await call("PATCH", `/device?$filter=id in (${all.join(", ")})`, { is_active: false }),
        400,
        /online/,
      );
      expect(await snapshot("device", all)).toEqual(before);
      expect(await billingEventsOf(all)).toEqual([]);

      expectOk(await call("PATCH", `/device(${offline.id})`, { is_active: false }), 1);
      expect((await one("device", offline.id))?.is_active).toBe(false);
      const [event, ...more] = await billingEventsOf([offline.id]);
      expect(more).toEqual([]);
      expect(event).toMatchObject({ kind: "deactivation", device: offline.id, device_uuid: offline.uuid });

      const three = [offline.id, alreadyInactive.id, offline2.id];
      expectOk(await call("PATCH", `/device?$filter=id in (${three.join(", ")})`, { is_active: false }), 3);
      const events = await billingEventsOf(all);
      expect(events.map((e) => [e.kind, e.device, e.device_uuid])).toEqual([
        ["deactivation", offline.id, offline.uuid],
        ["deactivation", offline2.id, offline2.uuid],
      ]);
      // reactivating bills nothing; the events outlive the device
      expectOk(await call("PATCH", `/device(${offline.id})`, { is_active: true }), 1);
      expectOk(await call("DELETE", `/device(${offline.id})`), 1);
      expect((await billingEventsOf(all)).length).toBe(2);
    });

    it("the fixture's online devices cannot be deactivated", async () => {
      const onlineDevice = fx.devices.find((d) => d.is_online && d.is_active) as Device;
      expectError(await call("PATCH", `/device(${onlineDevice.id})`, { is_active: false }), 400, /online/);
      expect(await billingEventsOf([onlineDevice.id])).toEqual([]);
    });
  });

  describe("fleet rules", () => {
    async function releaseWorld(label: string) {
      const { w, org, dtA, fleet, release } = await basicWorld(label);
      // release (2025-01-01, success) is older than these
      const newest = await w.release(fleet, { created_at: new Date("2025-05-01T00:00:00Z") });
      const newerFailed = await w.release(fleet, {
        status: "failed",
        created_at: new Date("2025-06-01T00:00:00Z"),
      });
      const newerDraft = await w.release(fleet, {
        is_final: false,
        created_at: new Date("2025-07-01T00:00:00Z"),
      });
      const newerInvalid = await w.release(fleet, {
        is_invalidated: true,
        created_at: new Date("2025-08-01T00:00:00Z"),
      });
      const newerRunning = await w.release(fleet, {
        status: "running",
        created_at: new Date("2025-09-01T00:00:00Z"),
      });
      return { w, org, dtA, fleet, release, newest, newerFailed, newerDraft, newerInvalid, newerRunning };
    }

    it("setting commit targets that release and stops tracking; an unknown commit is a 400", async () => {
      const { fleet, release, newest } = await releaseWorld("commit");
      expectOk(await call("PATCH", `/application(${fleet.id})`, { commit: release.commit }), 1);
      expect(await one("application", fleet.id)).toMatchObject({
        should_be_running__release: link(release.id),
        commit: release.commit,
        should_track_latest_release: false,
      });
      const before = await one("application", fleet.id);
      expectError(
        await call("PATCH", `/application(${fleet.id})`, { commit: "0".repeat(32) }),
        400,
        /commit/,
      );
      expect(await one("application", fleet.id)).toEqual(before);
      expectOk(await call("PATCH", `/application(${fleet.id})`, { commit: newest.commit }), 1);
      expect(await one("application", fleet.id)).toMatchObject({
        should_be_running__release: link(newest.id),
      });
    });

    it("commit null clears the fleet's target and stops tracking", async () => {
      const { w, fleet, release } = await basicWorld("commitnull");
      await w.target(fleet, release);
      expectOk(await call("PATCH", `/application(${fleet.id})`, { commit: null }), 1);
      expect(await one("application", fleet.id)).toMatchObject({
        should_be_running__release: null,
        commit: null,
        should_track_latest_release: false,
      });
    });

    it("a new fleet cannot be created on a commit it has no release of", async () => {
      const w = world("createcommit");
      const dt = await w.deviceType("amd64");
      const org = await w.organization();
      const reply = await call("POST", "/application", {
        app_name: "c",
        device_type: dt.slug,
        organization: org.id,
        commit: w.commit(),
      });
      expectError(reply, 400, /commit/);
      expect(await rows(`/application?$filter=organization eq ${org.id}`)).toEqual([]);
    });

    it("a commit of another fleet's release is a 400", async () => {
      const { fleet, otherRelease } = await basicWorld("commitforeign");
      const before = await one("application", fleet.id);
      expectError(
        await call("PATCH", `/application(${fleet.id})`, { commit: otherRelease.commit }),
        400,
        /commit/,
      );
      expect(await one("application", fleet.id)).toEqual(before);
    });

    it("commit with should_track_latest_release in the same request keeps what the request says", async () => {
      const { fleet, release } = await releaseWorld("committrack");
      expectOk(
        await call("PATCH", `/application(${fleet.id})`, {
          commit: release.commit,
          should_track_latest_release: false,
        }),
        1,
      );
      expect(await one("application", fleet.id)).toMatchObject({
        should_be_running__release: link(release.id),
        should_track_latest_release: false,
      });
      expectOk(
        await call("PATCH", `/application(${fleet.id})`, {
          commit: release.commit,
          should_track_latest_release: true,
        }),
        1,
      );
      expect((await one("application", fleet.id))?.should_track_latest_release).toBe(true);
    });

    it("a bulk commit sets each fleet's own release of that commit", async () => {
      const w = world("bulkcommit");
      const dt = await w.deviceType("aarch64");
      const org = await w.organization();
      const commit = w.commit();
      const fleets = [await w.fleet(org, dt), await w.fleet(org, dt), await w.fleet(org, dt)];
      const releases: Release[] = [];
      for (const fleet of fleets) releases.push(await w.release(fleet, { commit }));
      expectOk(await call("PATCH", `/application?$filter=organization eq ${org.id}`, { commit }), 3);
      const now = await snapshot(
        "application",
        fleets.map((f) => f.id),
      );
      expect(now.map((f) => [f.should_be_running__release, f.commit, f.should_track_latest_release])).toEqual(
        releases.map((r) => [link(r.id), commit, false]),
      );
    });

    it("should_be_running__release on a fleet must be one of its releases and stops tracking", async () => {
      const { fleet, release, otherRelease } = await basicWorld("fleettarget");
      const before = await one("application", fleet.id);
      expectError(
        await call("PATCH", `/application(${fleet.id})`, { should_be_running__release: otherRelease.id }),
        400,
        /should_be_running__release/,
      );
      expect(await one("application", fleet.id)).toEqual(before);
      expectOk(
        await call("PATCH", `/application(${fleet.id})`, { should_be_running__release: release.id }),
        1,
      );
      expect(await one("application", fleet.id)).toMatchObject({
        should_be_running__release: link(release.id),
        commit: release.commit,
        should_track_latest_release: false,
      });
    });

    it("should_track_latest_release: true moves the fleet to its newest successful, final, valid release", async () => {
      const { w, fleet, release, newest } = await releaseWorld("track");
      await w.db.prisma.application.update({
        where: { id: fleet.id },
        data: { should_track_latest_release: false, should_be_running__release: release.id },
      });
      expectOk(await call("PATCH", `/application(${fleet.id})`, { should_track_latest_release: true }), 1);
      expect(await one("application", fleet.id)).toMatchObject({
        should_track_latest_release: true,
        should_be_running__release: link(newest.id),
        commit: newest.commit,
      });
      // the string form too
      await w.db.prisma.application.update({
        where: { id: fleet.id },
        data: { should_track_latest_release: false, should_be_running__release: release.id },
      });
      expectOk(await call("PATCH", `/application(${fleet.id})`, { should_track_latest_release: "true" }), 1);
      expect((await one("application", fleet.id))?.should_be_running__release).toEqual(link(newest.id));
      // switching tracking off keeps the target
      expectOk(await call("PATCH", `/application(${fleet.id})`, { should_track_latest_release: "false" }), 1);
      expect(await one("application", fleet.id)).toMatchObject({
        should_track_latest_release: false,
        should_be_running__release: link(newest.id),
      });
    });

    it("creating a successful final release moves its tracking fleet to it; other releases and fleets do not move", async () => {
      const { w, org, dtA, fleet, newest } = await releaseWorld("newrelease");
      await w.target(fleet, newest);
      const pinnedFleet = await w.fleet(org, dtA, { track: false });
      const pinnedOld = await w.release(pinnedFleet);
      await w.target(pinnedFleet, pinnedOld);
      const bystander = await w.fleet(org, dtA);
      const bystanderRelease = await w.release(bystander);
      await w.target(bystander, bystanderRelease);

      // not eligible: running, or not final
      for (const body of [
        { status: "running" },
        { status: "success", is_final: false },
        { status: "failed" },
      ]) {
        const created = await call("POST", "/release", {
          belongs_to__application: fleet.id,
          commit: w.commit(),
          ...body,
        });
        expectCreated(created, "release");
        expect((await one("application", fleet.id))?.should_be_running__release).toEqual(link(newest.id));
      }
      const reply = await call("POST", "/release", {
        belongs_to__application: fleet.id,
        commit: w.commit(),
        status: "success",
      });
      const created = expectCreated(reply, "release");
      expect(await one("application", fleet.id)).toMatchObject({
        should_be_running__release: link(created.id as number),
      });
      // a fleet that does not track stays where it is
      const pinnedNew = expectCreated(
        await call("POST", "/release", {
          belongs_to__application: pinnedFleet.id,
          commit: w.commit(),
          status: "success",
        }),
        "release",
      );
      expect(pinnedNew.id).toBeGreaterThan(0);
      expect((await one("application", pinnedFleet.id))?.should_be_running__release).toEqual(
        link(pinnedOld.id),
      );
      expect((await one("application", bystander.id))?.should_be_running__release).toEqual(
        link(bystanderRelease.id),
      );
    });

    it("updating a release to successful and final moves its tracking fleet to it; invalidating it moves back", async () => {
      const { w, fleet, newest, newerRunning } = await releaseWorld("updaterelease");
      await w.target(fleet, newest);
      expectOk(await call("PATCH", `/release(${newerRunning.id})`, { status: "success" }), 1);
      expect((await one("application", fleet.id))?.should_be_running__release).toEqual(link(newerRunning.id));
      expectOk(await call("PATCH", `/release(${newerRunning.id})`, { is_invalidated: true }), 1);
      expect((await one("application", fleet.id))?.should_be_running__release).toEqual(link(newest.id));
    });

    it("the slug follows renames of the fleet, moves between organizations and handle changes", async () => {
      const { w, org, fleet, other } = await basicWorld("slug");
      expectOk(await call("PATCH", `/application(${fleet.id})`, { app_name: "Renamed Fleet" }), 1);
      expect((await one("application", fleet.id))?.slug).toBe(`${org.handle}/renamed fleet`.toLowerCase());
      const org2 = await w.organization(w.name("Second-ORG"));
      expectOk(await call("PATCH", `/application(${fleet.id})`, { organization: org2.id }), 1);
      expect((await one("application", fleet.id))?.slug).toBe(`${org2.handle}/renamed fleet`.toLowerCase());
      const handle = w.name("New.Handle");
      expectOk(await call("PATCH", `/organization(${org.id})`, { handle }), 1);
      expect((await one("application", other.id))?.slug).toBe(`${handle}/${other.app_name}`.toLowerCase());
      expect((await one("application", fleet.id))?.slug).toBe(`${org2.handle}/renamed fleet`.toLowerCase());
    });

    it("changing device_type by slug sets is_for__device_type; an unknown slug is a 400", async () => {
      const { fleet, dtA2 } = await basicWorld("fleetdt");
      expectOk(await call("PATCH", `/application(${fleet.id})`, { device_type: dtA2.slug }), 1);
      expect(await one("application", fleet.id)).toMatchObject({
        device_type: dtA2.slug,
        is_for__device_type: link(dtA2.id),
      });
      expectError(
        await call("PATCH", `/application(${fleet.id})`, { device_type: "nope" }),
        400,
        /device type/,
      );
    });

    it("a fleet cannot depend on itself", async () => {
      const { fleet, other } = await basicWorld("selfdep");
      expectError(
        await call("PATCH", `/application(${fleet.id})`, { depends_on__application: fleet.id }),
        400,
        /depend/,
      );
      expectOk(await call("PATCH", `/application(${fleet.id})`, { depends_on__application: other.id }), 1);
      expect((await one("application", fleet.id))?.depends_on__application).toEqual(link(other.id));
    });

    it("deleting a fleet removes its devices, releases, tags and variables, and nothing else", async () => {
      const { w, fleet, other, release } = await basicWorld("deletefleet");
      const devices = [await w.device(fleet, { pin: release }), await w.device(fleet)];
      const deviceTag = await w.deviceTag(devices[0] as Device, "k", "v");
      const deviceVariable = await w.deviceVariable(devices[1] as Device, "V", "1");
      const fleetTag = await w.fleetTag(fleet, "k", "v");
      const fleetVariable = await w.fleetVariable(fleet, "V", "1");
      const keptDevice = await w.device(other);
      const keptTag = await w.fleetTag(other, "k", "v");
      await w.db.prisma.application.update({
        where: { id: other.id },
        data: { depends_on__application: fleet.id },
      });
      await w.target(fleet, release);

      expectOk(await call("DELETE", `/application(${fleet.id})`), 1);
      expect(await one("application", fleet.id)).toBeUndefined();
      for (const device of devices) expect(await one("device", device.id)).toBeUndefined();
      expect(await one("release", release.id)).toBeUndefined();
      expect(await one("device_tag", deviceTag.id)).toBeUndefined();
      expect(await one("device_environment_variable", deviceVariable.id)).toBeUndefined();
      expect(await one("application_tag", fleetTag.id)).toBeUndefined();
      expect(await one("application_environment_variable", fleetVariable.id)).toBeUndefined();
      expect(await one("device", keptDevice.id)).toBeDefined();
      expect(await one("application_tag", keptTag.id)).toBeDefined();
      expect((await one("application", other.id))?.depends_on__application).toBeNull();
    });

    it("a bulk DELETE of fleets removes exactly the matching fleets and what belongs to them", async () => {
      const w = world("bulkfleets");
      const dt = await w.deviceType("aarch64");
      const org = await w.organization();
      const fleets: Application[] = [];
      for (let i = 0; i < 5; i++)
        fleets.push(await w.fleet(org, dt, { app_name: w.name(i % 2 ? "odd" : "even") }));
      const devices: Device[] = [];
      for (const fleet of fleets) devices.push(await w.device(fleet), await w.device(fleet));
      const doomed = fleets.filter((f) => f.app_name.startsWith("odd"));
      expectOk(
        await call("DELETE", `/application?$filter=organization eq ${org.id} and startswith(app_name,'odd')`),
        doomed.length,
      );
      for (const fleet of fleets) {
        const gone = doomed.includes(fleet);
        expect(await one("application", fleet.id), `fleet ${fleet.id}`).toEqual(
          gone ? undefined : expect.anything(),
        );
        for (const device of devices.filter((d) => d.belongs_to__application === fleet.id)) {
          expect(await one("device", device.id), `device ${device.id}`).toEqual(
            gone ? undefined : expect.anything(),
          );
        }
      }
    });
  });

  describe("other resources", () => {
    it("PATCH and DELETE tags and variables by key and by filter", async () => {
      const { w, fleet } = await basicWorld("named");
      const device = await w.device(fleet);
      const v1 = await w.deviceVariable(device, "A", "1");
      const v2 = await w.deviceVariable(device, "B", "2");
      const t1 = await w.fleetTag(fleet, "k1", "v");
      const t2 = await w.fleetTag(fleet, "k2", "v");
      expectOk(
        await call("PATCH", `/device_environment_variable(${v1.id})`, { value: "changed", name: "A2" }),
        1,
      );
      expect(await one("device_environment_variable", v1.id)).toMatchObject({ name: "A2", value: "changed" });
      expectError(await call("PATCH", `/device_environment_variable(${v2.id})`, { name: "2B" }), 400, /name/);
      expectOk(
        await call("PATCH", `/application_tag?$filter=application eq ${fleet.id}`, { value: "all" }),
        2,
      );
      expect((await snapshot("application_tag", [t1.id, t2.id])).map((t) => t.value)).toEqual(["all", "all"]);
      expectOk(
        await call("DELETE", `/device_environment_variable?$filter=device/uuid eq '${device.uuid}'`),
        2,
      );
      expect(await rows(`/device_environment_variable?$filter=device eq ${device.id}`)).toEqual([]);
      expectOk(await call("DELETE", `/application_tag(application=${fleet.id},tag_key='k1')`), 1);
      expect(await snapshot("application_tag", [t1.id, t2.id])).toMatchObject([{ id: t2.id }]);
    });

    it("organizations: create, rename, delete an empty one", async () => {
      const handle = `org-${Date.now()}`;
      const created = expectCreated(
        await call("POST", "/organization", { name: "N", handle }),
        "organization",
      );
      expectOk(await call("PATCH", `/organization(handle='${handle}')`, { name: "Renamed" }), 1);
      expect((await one("organization", created.id as number))?.name).toBe("Renamed");
      expectOk(await call("DELETE", `/organization(${created.id})`), 1);
      expect(await one("organization", created.id as number)).toBeUndefined();
    });

    it("read-only resources refuse PATCH and DELETE", async () => {
      // Users are writable (by admins and themselves); the catalogue and billing events are not.
      expect((await call("PATCH", `/device_type(${fx.deviceTypes[0]?.id})`, { name: "x" })).status).toBe(400);
      expect((await call("DELETE", "/billing_event?$filter=id gt 0")).status).toBe(400);
    });
  });
});
