import { describe, expect, it } from "vitest";
import type { Application } from "../../src/generated/prisma/client.ts";
import { databaseKinds } from "../support/databases.ts";
import { byId, idsOf, text, useODataReads } from "../support/odata/odata-reads.ts";
import { overallStatus } from "../support/oracle/oracle.ts";

// OData reads, $orderby, $top and $skip: keys, directions, ties and paging. Every expectation is
// computed in JavaScript from the rows of test/support/core/read-fixture.ts (filter, sort and map the
// arrays), never by asking the compiler.

describe.each(databaseKinds)("OData read results on %s", (kind) => {
  const reads = useODataReads(kind);
  const { ok, appById, devicesOf } = reads;

  describe("$orderby, $top, $skip", () => {
    it("several keys with mixed directions", async () => {
      const body = await ok("/device?$select=id&$orderby=is_online desc,device_name asc,id desc");
      const expected = [...reads.fx.devices].sort(
        (a, b) =>
          Number(b.is_online) - Number(a.is_online) || text(a.device_name, b.device_name) || b.id - a.id,
      );
      expect(body).toEqual({ d: idsOf(expected) });
    });

    it("no direction means ascending, and ties fall back to id ascending", async () => {
      const body = await ok("/device?$select=id&$orderby=device_name");
      const expected = [...reads.fx.devices].sort(
        (a, b) => text(a.device_name, b.device_name) || a.id - b.id,
      );
      expect(body).toEqual({ d: idsOf(expected) });
    });

    it("a path key: belongs_to__application/app_name, then device_name desc", async () => {
      const body = await ok("/device?$select=id&$orderby=belongs_to__application/app_name,device_name desc");
      const expected = [...reads.fx.devices].sort(
        (a, b) =>
          text(appById(a.belongs_to__application).app_name, appById(b.belongs_to__application).app_name) ||
          text(b.device_name, a.device_name) ||
          a.id - b.id,
      );
      expect(body).toEqual({ d: idsOf(expected) });
    });

    it("owns__device/$count desc", async () => {
      const body = await ok("/application?$select=id&$orderby=owns__device/$count desc");
      const expected = [...reads.fx.applications].sort(
        (a, b) => devicesOf(b).length - devicesOf(a).length || a.id - b.id,
      );
      expect(body).toEqual({ d: idsOf(expected) });
    });

    it("a datetime key with ties: created_at desc", async () => {
      const body = await ok("/release?$select=id&$orderby=created_at desc");
      const expected = [...reads.fx.releases].sort(
        (a, b) => b.created_at.getTime() - a.created_at.getTime() || a.id - b.id,
      );
      expect(body).toEqual({ d: idsOf(expected) });
    });

    it("a $count key with its own filter: owns__device/$count($filter=is_online eq true) desc", async () => {
      const body = await ok(
        "/application?$select=id&$orderby=owns__device/$count($filter=is_online eq true) desc",
      );
      const online = (a: Application) => devicesOf(a).filter((d) => d.is_online).length;
      expect(body).toEqual({
        d: idsOf([...reads.fx.applications].sort((a, b) => online(b) - online(a) || a.id - b.id)),
      });
    });

    it("a computed key: overall_status, then id desc", async () => {
      const body = await ok("/device?$select=id,overall_status&$orderby=overall_status,id desc");
      const expected = [...reads.fx.devices]
        .sort((a, b) => text(overallStatus(a), overallStatus(b)) || b.id - a.id)
        .map((d) => ({ id: d.id, overall_status: overallStatus(d) }));
      expect(body).toEqual({ d: expected });
    });

    it("an $orderby inside an expansion on a to-one path", async () => {
      const body = await ok(
        "/organization?$select=handle&$expand=application($select=id;$orderby=is_for__device_type/slug desc)",
      );
      const slug = (a: Application) =>
        reads.fx.deviceTypes.find((t) => t.id === a.is_for__device_type)?.slug ?? "";
      expect(body).toEqual({
        d: [...reads.fx.organizations].sort(byId).map((o) => ({
          handle: o.handle,
          application: idsOf(
            reads.fx.applications
              .filter((a) => a.organization === o.id)
              .sort((a, b) => text(slug(b), slug(a)) || a.id - b.id),
          ),
        })),
      });
    });

    it("the default order is by id ascending (also for rows updated after insertion)", async () => {
      expect(await ok("/device?$select=id")).toEqual({ d: idsOf([...reads.fx.devices].sort(byId)) });
      expect(await ok("/release?$select=id")).toEqual({ d: idsOf([...reads.fx.releases].sort(byId)) });
    });

    it.each([
      ["$top=5", 0, 5],
      ["$skip=35", 35, undefined],
      ["$top=3&$skip=10", 10, 13],
      ["$top=0", 0, 0],
      ["$skip=1000", 1000, undefined],
    ] as const)("%s in default order", async (paging, from, to) => {
      const body = await ok(`/device?$select=id&${paging}`);
      expect(body).toEqual({ d: idsOf([...reads.fx.devices].sort(byId).slice(from, to)) });
    });

    it("$top and $skip after $filter and $orderby", async () => {
      const body = await ok(
        "/device?$select=id&$filter=is_online eq true&$orderby=cpu_usage desc&$top=5&$skip=2",
      );
      // cpu_usage is nullable: PostgreSQL puts nulls first in descending order
      const online = reads.fx.devices.filter((d) => d.is_online);
      const expected = [...online].sort((a, b) => {
        if (a.cpu_usage === b.cpu_usage) return a.id - b.id;
        if (a.cpu_usage === null) return -1;
        if (b.cpu_usage === null) return 1;
        return b.cpu_usage - a.cpu_usage;
      });
      expect(body).toEqual({ d: idsOf(expected.slice(2, 7)) });
    });
  });
});
