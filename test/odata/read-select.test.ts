import { describe, expect, it } from "vitest";
import type { Device } from "../../src/generated/prisma/client.ts";
import { databaseKinds } from "../support/databases.ts";
import { byId, pick, type Row, useODataReads, wire } from "../support/odata/odata-reads.ts";
import { releaseVersion } from "../support/odata/pine-wire.ts";
import { overallStatus } from "../support/oracle/oracle.ts";

// OData reads, $select and computed fields: which fields a read gives, in which order. Every
// expectation is computed in JavaScript from the rows of test/support/core/read-fixture.ts (filter, sort
// and map the arrays), never by asking the compiler.

describe.each(databaseKinds)("OData read results on %s", (kind) => {
  const reads = useODataReads(kind);
  const { ok, expectDevices } = reads;

  describe("$select and computed fields", () => {
    it("a key read gives every default field: timestamps, links as {__id}, no hidden or computed field", async () => {
      const device = reads.fx.devices[11] as Device;
      expect(device.is_managed_by__device).not.toBeNull();
      expect(await ok(`/device(${device.id})`)).toEqual({ d: [wire("device", device)] });
    });

    it("the whole device collection in default order", async () => {
      expect(await ok("/device")).toEqual({
        d: [...reads.fx.devices].sort(byId).map((d) => wire("device", d)),
      });
    });

    it("the whole release collection, with its computed version fields", async () => {
      expect(await ok("/release")).toEqual({
        d: [...reads.fx.releases].sort(byId).map((r) => ({ ...wire("release", r), ...releaseVersion(r) })),
      });
    });

    it("the whole application collection, with its computed commit and device_type", async () => {
      // commit: the commit of the fleet's target release; device_type: the slug of its device type.
      expect(await ok("/application")).toEqual({
        d: [...reads.fx.applications].sort(byId).map((a) => ({
          ...wire("application", a),
          commit: reads.fx.releases.find((r) => r.id === a.should_be_running__release)?.commit ?? null,
          device_type: reads.fx.deviceTypes.find((t) => t.id === a.is_for__device_type)?.slug,
        })),
      });
    });

    it("$select with link fields: {__id} when set, null when not", async () => {
      const fields = ["id", "device_name", "belongs_to__application", "should_be_running__release", "note"];
      const body = await ok(`/device?$select=${fields.join(",")}`);
      const expected = [...reads.fx.devices].sort(byId).map((d) => pick("device", d, fields));
      expect(body).toEqual({ d: expected });
      // both shapes occur
      expect(expected.some((d) => d.should_be_running__release === null)).toBe(true);
      expect(expected.some((d) => d.should_be_running__release !== null)).toBe(true);
    });

    it("an unpinned device has should_be_running__release: null", async () => {
      const unpinned = reads.fx.devices.find((d) => d.should_be_running__release === null) as Device;
      const body = (await ok(`/device(${unpinned.id})?$select=should_be_running__release`)) as { d: Row[] };
      expect(body).toEqual({ d: [{ should_be_running__release: null }] });
    });

    it("$select=* is every default field", async () => {
      const device = reads.fx.devices[3] as Device;
      expect(await ok(`/device(${device.id})?$select=*`)).toEqual({ d: [wire("device", device)] });
    });

    it("$select keeps the order of the named fields", async () => {
      const device = reads.fx.devices[3] as Device;
      const response = await reads.server.app.inject({
        method: "GET",
        url: `/v6/device(${device.id})?$select=uuid,id,device_name`,
      });
      expect(Object.keys((JSON.parse(response.body) as { d: Row[] }).d[0] as Row)).toEqual([
        "uuid",
        "id",
        "device_name",
      ]);
    });

    it("overall_status appears only when selected", async () => {
      const body = (await ok("/device")) as { d: Row[] };
      expect(body.d.every((row) => !("overall_status" in row))).toBe(true);
      expect(await ok("/device?$select=id,overall_status")).toEqual({
        d: [...reads.fx.devices].sort(byId).map((d) => ({ id: d.id, overall_status: overallStatus(d) })),
      });
    });

    it.each(["inactive", "configuring", "offline", "updating", "idle"])(
      "$filter=overall_status eq '%s'",
      async (status) => {
        expect(reads.fx.devices.some((d) => overallStatus(d) === status)).toBe(true);
        await expectDevices(`overall_status eq '${status}'`, (d) => overallStatus(d) === status);
      },
    );

    it("$filter on overall_status without selecting it does not output it", async () => {
      const body = (await ok("/device?$filter=overall_status eq 'offline'")) as { d: Row[] };
      expect(body.d.length).toBe(reads.fx.devices.filter((d) => overallStatus(d) === "offline").length);
      expect(body.d.every((row) => !("overall_status" in row))).toBe(true);
    });
  });
});
