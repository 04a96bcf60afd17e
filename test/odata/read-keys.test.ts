import { describe, expect, it } from "vitest";
import type { Application, Device, DeviceTag } from "../../src/generated/prisma/client.ts";
import { databaseKinds } from "../support/databases.ts";
import { useODataReads, wire } from "../support/odata/odata-reads.ts";

// OData reads, keys: by id, by an alternate or composite key, and a key that matches nothing. Every
// expectation is computed in JavaScript from the rows of test/support/core/read-fixture.ts (filter, sort
// and map the arrays), never by asking the compiler.

describe.each(databaseKinds)("OData read results on %s", (kind) => {
  const reads = useODataReads(kind);
  const { ok, fails, tagsOf } = reads;

  describe("keys", () => {
    const device = () => reads.fx.devices[4] as Device;

    it("device(N)", async () => {
      expect(await ok(`/device(${device().id})?$select=id,uuid`)).toEqual({
        d: [{ id: device().id, uuid: device().uuid }],
      });
    });

    it("device(@id)?@id=N", async () => {
      expect(await ok(`/device(@id)?@id=${device().id}&$select=id,uuid`)).toEqual({
        d: [{ id: device().id, uuid: device().uuid }],
      });
    });

    it("device(uuid='…') and device(uuid=%27…%27)", async () => {
      const expected = { d: [{ id: device().id, uuid: device().uuid }] };
      expect(await ok(`/device(uuid='${device().uuid}')?$select=id,uuid`)).toEqual(expected);
      expect(await ok(`/device(uuid=%27${device().uuid}%27)?$select=id,uuid`)).toEqual(expected);
    });

    it("a composite key: device_tag(device=N,tag_key='k')", async () => {
      const tag = reads.fx.deviceTags.find((t) => t.tag_key === "k") as DeviceTag;
      expect(await ok(`/device_tag(device=${tag.device},tag_key='k')`)).toEqual({
        d: [wire("device_tag", tag)],
      });
      expect(await ok(`/device_tag(tag_key='k',device=${tag.device})?$select=id`)).toEqual({
        d: [{ id: tag.id }],
      });
    });

    it("application(slug='org%2Fname')", async () => {
      const app = reads.fx.applications[1] as Application;
      expect(app.slug).toContain("/");
      expect(await ok(`/application(slug='${app.slug.replace("/", "%2F")}')?$select=id,slug`)).toEqual({
        d: [{ id: app.id, slug: app.slug }],
      });
    });

    it("a key combines with $filter and $expand", async () => {
      const d = reads.fx.devices[0] as Device;
      expect(
        await ok(`/device(${d.id})?$select=id&$filter=is_online eq ${d.is_online}&$expand=device_tag/$count`),
      ).toEqual({ d: [{ id: d.id, device_tag: tagsOf(d).length }] });
      expect(await ok(`/device(${d.id})?$select=id&$filter=is_online eq ${!d.is_online}`)).toEqual({ d: [] });
    });

    it.each(["/device(999999)", "/device(uuid='nope')", "/device_tag(device=1,tag_key='missing')"])(
      "a miss is {d: []} with 200: %s",
      async (path) => {
        expect(await ok(path)).toEqual({ d: [] });
      },
    );

    it("a non-key field set is a 400: device(device_name='x')", async () => {
      await fails("/device(device_name='x')", 400, /device_name/);
    });
  });
});
