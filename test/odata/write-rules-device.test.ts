import { describe, expect, it } from "vitest";
import type { Device } from "../../src/generated/prisma/client.ts";
import { databaseKinds } from "../support/databases.ts";
import { link, odataWrites, type Row } from "../support/odata/odata-writes.ts";

// The rules of a device write: pins to the device's own fleet, moves between fleets of one
// architecture, deactivation only offline, with one billing event per device deactivated.

describe.each(databaseKinds)("OData writes on %s", (kind) => {
  const { fixture, basicWorld, call, rows, one, snapshot, expectOk, expectError, billingEventsOf } =
    odataWrites(kind, { fixture: true });

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

    it("moving a device needs a fleet of an architecture it runs and clears a pin to the old fleet", async () => {
      const { w, fleet, other, armFleet, release, otherRelease } = await basicWorld("move");
      const device = await w.device(fleet, { pin: release });
      const before = (await one("device", device.id)) as Row;
      // Issue 19: balena's compatibility, not equality (aarch64 runs armv7hf, not the reverse).
      // armv7hf → aarch64: refused, nothing changes
      const armDevice = await w.device(armFleet);
      const armBefore = await one("device", armDevice.id);
      expectError(
        await call("PATCH", `/device(${armDevice.id})`, { belongs_to__application: fleet.id }),
        400,
        /architecture/,
      );
      expect(await one("device", armDevice.id)).toEqual(armBefore);
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

      // balena's words (issue 30), which name no device.
      expectError(
        await call("PATCH", `/device(${online.id})`, { is_active: false }),
        400,
        /^Devices must be offline in order to be deactivated\.$/,
      );
      expect((await one("device", online.id))?.is_active).toBe(true);
      // a bulk deactivation with one online device changes none and bills none
      const all = [online.id, offline.id, alreadyInactive.id, offline2.id];
      const before = await snapshot("device", all);
      expectError(
        await call("PATCH", `/device?$filter=id in (${all.join(", ")})`, { is_active: false }),
        400,
        /must be offline/,
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
      const onlineDevice = fixture().devices.find((d) => d.is_online && d.is_active) as Device;
      expectError(
        await call("PATCH", `/device(${onlineDevice.id})`, { is_active: false }),
        400,
        /must be offline/,
      );
      expect(await billingEventsOf([onlineDevice.id])).toEqual([]);
    });
  });
});
