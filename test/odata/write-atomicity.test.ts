import { describe, expect, it } from "vitest";
import type { Device } from "../../src/generated/prisma/client.ts";
import { databaseKinds } from "../support/databases.ts";
import { odataWrites } from "../support/odata/odata-writes.ts";

// A write is all or nothing: a rule that refuses one row, a trigger that fails on one, a restricting
// foreign key, a unique key; each answers 400, 409 or an error, and no row changes.

describe.each(databaseKinds)("OData writes on %s", (kind) => {
  const { server, world, basicWorld, call, rows, one, snapshot, expectOk, expectError } = odataWrites(kind);

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
      await server().test.db.script(`
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
        await server().test.db.script(`
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
      // Issue 19: a commit is unique among a fleet's successful releases only, and a second
      // successful one is refused with balena's rule (400), as open-balena-api refuses it.
      expectError(
        await call("POST", "/release", {
          belongs_to__application: fleet.id,
          commit: release.commit,
          status: "success",
        }),
        400,
        /^It is necessary that each application that owns a release1 that has a status that is equal to "success"/,
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
      // Issue 19: a fleet or device that does not exist (or that the caller cannot see) is refused
      // as balena refuses it, as a write the caller may not make: 401 on OData.
      expectError(await call("POST", "/device", { belongs_to__application: missing }), 401, /Unauthorized/);
      expectError(
        await call("PATCH", `/device(${device.id})`, { belongs_to__application: missing }),
        401,
        /Unauthorized/,
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
        401,
        /Unauthorized/,
      );
      expectError(
        await call("POST", "/release", { belongs_to__application: missing, commit: "c", status: "success" }),
        401,
        /Unauthorized/,
      );
      expectError(
        await call("POST", "/application", {
          app_name: "fk-a",
          device_type: dtA.slug,
          organization: missing,
        }),
        400,
        /organization/,
      );
      expectError(
        await call("POST", "/application", {
          app_name: "fk-b",
          is_for__device_type: missing,
          organization: org.id,
        }),
        400,
        /is_for__device_type/,
      );
      expectError(
        await call("PATCH", `/application(${fleet.id})`, { depends_on__application: missing }),
        401,
        /Unauthorized/,
      );
      expect(await one("device", device.id)).toEqual(before);
      expect((await rows(`/device?$filter=belongs_to__application eq ${fleet.id}`)).length).toBe(1);
    });
  });
});
