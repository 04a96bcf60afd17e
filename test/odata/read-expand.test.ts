import { describe, expect, it } from "vitest";
import type { Device, Release } from "../../src/generated/prisma/client.ts";
import { databaseKinds } from "../support/databases.ts";
import { byId, idsOf, text, useODataReads, wire } from "../support/odata/odata-reads.ts";

// OData reads, $expand: to-one and to-many, nested, with options and counts of their own. Every
// expectation is computed in JavaScript from the rows of test/support/core/read-fixture.ts (filter, sort
// and map the arrays), never by asking the compiler.

describe.each(databaseKinds)("OData read results on %s", (kind) => {
  const reads = useODataReads(kind);
  const { ok, appById, devicesOf, tagsOf } = reads;

  describe("$expand", () => {
    it("a to-one expansion is an array of one row, and replaces the {__id}", async () => {
      const body = await ok(
        "/device?$select=id,belongs_to__application&$expand=belongs_to__application($select=id,app_name)",
      );
      expect(body).toEqual({
        d: [...reads.fx.devices].sort(byId).map((d) => {
          const app = appById(d.belongs_to__application);
          return { id: d.id, belongs_to__application: [{ id: app.id, app_name: app.app_name }] };
        }),
      });
    });

    it("a to-one expansion of a null link is an empty array", async () => {
      const body = await ok("/device?$select=id&$expand=should_be_running__release($select=id,semver)");
      expect(body).toEqual({
        d: [...reads.fx.devices].sort(byId).map((d) => {
          const release = reads.fx.releases.find((r) => r.id === d.should_be_running__release);
          return {
            id: d.id,
            should_be_running__release: release ? [{ id: release.id, semver: release.semver }] : [],
          };
        }),
      });
    });

    it("an expansion without options gives every default field of the rows", async () => {
      const device = reads.fx.devices[0] as Device;
      const body = await ok(`/device(${device.id})?$expand=device_tag`);
      expect(body).toEqual({
        d: [
          {
            ...wire("device", device),
            device_tag: tagsOf(device)
              .sort(byId)
              .map((t) => wire("device_tag", t)),
          },
        ],
      });
    });

    it("depth 3 with nested $select;$filter;$orderby;$top;$skip;$expand", async () => {
      const url =
        "/application?$select=id,app_name&$orderby=app_name desc&$expand=owns__device(" +
        "$select=id,device_name;$filter=is_online eq true;$orderby=device_name desc;$top=4;$skip=1;" +
        "$expand=device_tag($select=tag_key,value;$orderby=tag_key desc;" +
        "$expand=device($select=id,uuid;$expand=belongs_to__application($select=slug))))";
      const expected = [...reads.fx.applications]
        .sort((a, b) => text(b.app_name, a.app_name) || a.id - b.id)
        .map((a) => ({
          id: a.id,
          app_name: a.app_name,
          owns__device: devicesOf(a)
            .filter((d) => d.is_online)
            .sort((x, y) => text(y.device_name, x.device_name) || x.id - y.id)
            .slice(1, 5)
            .map((d) => ({
              id: d.id,
              device_name: d.device_name,
              device_tag: tagsOf(d)
                .sort((x, y) => text(y.tag_key, x.tag_key) || x.id - y.id)
                .map((t) => ({
                  tag_key: t.tag_key,
                  value: t.value,
                  device: [{ id: d.id, uuid: d.uuid, belongs_to__application: [{ slug: a.slug }] }],
                })),
            })),
        }));
      // the page holds some tagged devices, or the deepest levels would go unchecked
      expect(expected.flatMap((a) => a.owns__device.flatMap((d) => d.device_tag)).length).toBeGreaterThan(0);
      expect(await ok(url)).toEqual({ d: expected });
    });

    it("options inside the parentheses may be separated by & as well", async () => {
      const url =
        "/application?$select=id&$expand=owns__device($select=id,device_name&$filter=is_active eq true&$orderby=id desc&$top=2&$skip=1)";
      expect(await ok(url)).toEqual({
        d: [...reads.fx.applications].sort(byId).map((a) => ({
          id: a.id,
          owns__device: devicesOf(a)
            .filter((d) => d.is_active)
            .sort((x, y) => y.id - x.id)
            .slice(1, 3)
            .map((d) => ({ id: d.id, device_name: d.device_name })),
        })),
      });
    });

    it("nav/$count in $expand gives a number", async () => {
      expect(await ok("/application?$select=id&$expand=owns__device/$count")).toEqual({
        d: [...reads.fx.applications]
          .sort(byId)
          .map((a) => ({ id: a.id, owns__device: devicesOf(a).length })),
      });
    });

    it("nav/$count($filter=…) in $expand gives a number", async () => {
      expect(
        await ok(
          "/application?$select=id&$expand=owns__device/$count($filter=is_online eq true),owns__release/$count",
        ),
      ).toEqual({
        d: [...reads.fx.applications].sort(byId).map((a) => ({
          id: a.id,
          owns__device: devicesOf(a).filter((d) => d.is_online).length,
          owns__release: reads.fx.releases.filter((r) => r.belongs_to__application === a.id).length,
        })),
      });
    });

    it("$count=true inside an expansion gives <nav>@odata.count, ignoring $top", async () => {
      const body = await ok(
        "/application?$select=id&$expand=owns__device($count=true;$top=2;$select=id;$filter=is_online eq true)",
      );
      expect(body).toEqual({
        d: [...reads.fx.applications].sort(byId).map((a) => {
          const online = devicesOf(a)
            .filter((d) => d.is_online)
            .sort(byId);
          return {
            id: a.id,
            owns__device: idsOf(online.slice(0, 2)),
            "owns__device@odata.count": online.length,
          };
        }),
      });
    });

    it("self-referencing navigations: depends_on__application and is_depended_on_by__application", async () => {
      const body = await ok(
        "/application?$select=id&$expand=depends_on__application($select=app_name),is_depended_on_by__application($select=app_name;$expand=owns__device/$count)",
      );
      expect(body).toEqual({
        d: [...reads.fx.applications].sort(byId).map((a) => ({
          id: a.id,
          depends_on__application: reads.fx.applications
            .filter((b) => b.id === a.depends_on__application)
            .map((b) => ({ app_name: b.app_name })),
          is_depended_on_by__application: reads.fx.applications
            .filter((b) => b.depends_on__application === a.id)
            .sort(byId)
            .map((b) => ({ app_name: b.app_name, owns__device: devicesOf(b).length })),
        })),
      });
    });

    it("a device's gateway and managed devices, filtered through the same table", async () => {
      const body = await ok(
        "/device?$select=id&$filter=manages__device/any(m:m/is_managed_by__device/id eq id)&$expand=manages__device($select=id;$expand=is_managed_by__device($select=id)),device_tag/$count",
      );
      const managed = (d: Device) =>
        reads.fx.devices.filter((m) => m.is_managed_by__device === d.id).sort(byId);
      expect(body).toEqual({
        d: reads.fx.devices
          .filter((d) => managed(d).length > 0)
          .sort(byId)
          .map((d) => ({
            id: d.id,
            manages__device: managed(d).map((m) => ({ id: m.id, is_managed_by__device: [{ id: d.id }] })),
            device_tag: tagsOf(d).length,
          })),
      });
    });

    it("two expansions side by side, one to-many and one to-one", async () => {
      const body = await ok(
        "/release?$select=id&$filter=status eq 'failed'&$expand=belongs_to__application($select=app_name),is_running_on__device($select=id)",
      );
      expect(body).toEqual({
        d: reads.fx.releases
          .filter((r: Release) => r.status === "failed")
          .sort(byId)
          .map((r) => ({
            id: r.id,
            belongs_to__application: [{ app_name: appById(r.belongs_to__application).app_name }],
            is_running_on__device: idsOf(
              reads.fx.devices.filter((d) => d.is_running__release === r.id).sort(byId),
            ),
          })),
      });
    });
  });
});
