import { describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { byId, idsOf, useODataReads } from "../support/odata/odata-reads.ts";

// OData reads, counts: /$count, with a filter, and $count=true beside the rows. Every expectation is
// computed in JavaScript from the rows of test/support/core/read-fixture.ts (filter, sort and map the
// arrays), never by asking the compiler.

describe.each(databaseKinds)("OData read results on %s", (kind) => {
  const reads = useODataReads(kind);
  const { ok } = reads;

  describe("counts", () => {
    it("/device/$count", async () => {
      expect(await ok("/device/$count")).toEqual({ d: reads.fx.devices.length });
    });

    it("/device/$count?$filter=…", async () => {
      expect(await ok("/device/$count?$filter=is_online eq true and note ne null")).toEqual({
        d: reads.fx.devices.filter((d) => d.is_online && d.note !== null).length,
      });
    });

    it("/application/$count?$filter with a path", async () => {
      expect(await ok("/application/$count?$filter=organization/handle eq 'acme'")).toEqual({
        d: reads.fx.applications.filter(
          (a) => reads.fx.organizations.find((o) => o.id === a.organization)?.handle === "acme",
        ).length,
      });
    });

    it("$count=true gives @odata.count (ignoring $top and $skip) alongside d", async () => {
      const online = reads.fx.devices.filter((d) => d.is_online).sort(byId);
      expect(await ok("/device?$select=id&$filter=is_online eq true&$count=true&$top=3&$skip=1")).toEqual({
        d: idsOf(online.slice(1, 4)),
        "@odata.count": online.length,
      });
    });
  });
});
