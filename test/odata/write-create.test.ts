import { describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { HEX32, link, odataWrites } from "../support/odata/odata-writes.ts";

// OData POST: what a create answers (201, Location, the entity as a GET by key shows it), the fields
// the server fills in, and the bodies and URLs a create refuses.

describe.each(databaseKinds)("OData writes on %s", (kind) => {
  const { world, basicWorld, call, rows, expectError, expectCreated, expectCreatedAsRead } =
    odataWrites(kind);

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
      // Issue 19: balena's fleet name rules (letters, digits, '_', '-'; 4 to 100 characters).
      const reply = await call("POST", "/application", {
        app_name: "My_Fleet",
        device_type: dt.slug,
        organization: org.id,
      });
      const fleet = await expectCreatedAsRead(reply, "application");
      expect(fleet).toMatchObject({
        app_name: "My_Fleet",
        slug: `${org.handle}/my_fleet`.toLowerCase(),
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
        app_name: "off-fleet",
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
        app_name: "on-fleet",
        device_type: dt.slug,
        organization: org.id,
        should_track_latest_release: "true",
      });
      expect(await expectCreatedAsRead(on, "application")).toMatchObject({
        should_track_latest_release: true,
      });
      const yes = await call("POST", "/application", {
        app_name: "yes-fleet",
        device_type: dt.slug,
        organization: org.id,
        should_track_latest_release: "yes",
      });
      expectError(yes, 400, /should_track_latest_release/);
    });

    it.each([
      ["without a device type", { app_name: "xfleet", organization: "ORG" }, /device_type/],
      ["without an organization", { app_name: "xfleet", device_type: "SLUG" }, /organization/],
      ["without app_name", { device_type: "SLUG", organization: "ORG" }, /app_name/],
      [
        "with an unknown device type slug",
        { app_name: "xfleet", device_type: "no-such-type", organization: "ORG" },
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
      // Issue 19: balena's tag key rules and messages.
      ["/device_tag", "device", { tag_key: "  ", value: "x" }, /^Tag keys cannot contain whitespace\.$/],
      ["/application_tag", "application", { tag_key: "", value: "x" }, /has a tag key that has a Length/],
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
});
