import { describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { link, odataWrites, type Row } from "../support/odata/odata-writes.ts";

// The shape of a write request: bodies refused before any row is touched (not an object, unknown or
// server-owned fields, wrong types, nulls where none may be), each a 400 naming the field with nothing
// changed; the URL forms of PATCH, PUT and DELETE (keys, alternate and composite keys, $filter), the
// x-affected-rows they answer, PUT's replacement of the writable fields; tags, variables, organizations.

describe.each(databaseKinds)("OData writes on %s", (kind) => {
  const { fixture, basicWorld, call, callRaw, rows, one, snapshot, expectOk, expectError, expectCreated } =
    odataWrites(kind, { fixture: true });

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
      // Issue 19: a device's reported fields (is_online, …) are writable by whoever may write its
      // fleet, as in balena; its VPN state stays the server's.
      [
        "server field is_connected_to_vpn",
        "PATCH",
        device,
        { is_connected_to_vpn: true },
        /is_connected_to_vpn/,
      ],
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
        // Issue 19: a number is milliseconds since the epoch (the balena CLI's start_timestamp);
        // a boolean is no date-time.
        "timestamp a boolean",
        "PATCH",
        (ids) => `/release(${ids.release})`,
        { end_timestamp: true },
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
        // Read from semver and is_final: a final 0.0.0, the first of its version (revision 0).
        semver_major: 0,
        semver_minor: 0,
        semver_patch: 0,
        revision: 0,
        raw_version: "0.0.0",
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
      expect(
        (await call("PATCH", `/device_type(${fixture().deviceTypes[0]?.id})`, { name: "x" })).status,
      ).toBe(400);
      expect((await call("DELETE", "/billing_event?$filter=id gt 0")).status).toBe(400);
    });
  });
});
