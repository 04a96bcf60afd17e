import { describe, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { useODataReads } from "../support/odata/odata-reads.ts";

// OData reads, errors: an unknown resource or name is refused, naming the problem. Every expectation
// is computed in JavaScript from the rows of test/support/core/read-fixture.ts (filter, sort and map the
// arrays), never by asking the compiler.

describe.each(databaseKinds)("OData read results on %s", (kind) => {
  const reads = useODataReads(kind);
  const { fails } = reads;

  describe("errors", () => {
    it("an unknown resource is a 404", async () => {
      await fails("/nothing", 404, /nothing/);
      await fails("/nothing?$filter=id eq 1", 404, /nothing/);
    });

    it.each([
      ["/device?$filter=nope eq 1", /nope/],
      ["/device?$select=id,nope", /nope/],
      ["/device?$orderby=nope", /nope/],
      ["/device?$expand=nope", /nope/],
      ["/device?$expand=device_tag($select=nope)", /nope/],
      ["/device?$filter=belongs_to__application/nope eq 1", /nope/],
      ["/device?$filter=nope/app_name eq 'x'", /nope/],
      ["/application?$filter=nope/any(d:d/id eq 1)", /nope/],
      ["/application?$filter=owns__device/any(d:d/nope eq 1)", /nope/],
      ["/application?$filter=owns__device/$count($filter=nope eq 1) gt 0", /nope/],
      ["/device?$filter=foo(device_name) eq 1", /foo/],
      ["/device?$filter=nope(device_name,'x')", /nope/],
      ["/device?$filter=fractionalseconds(created_at) eq 0", /fractionalseconds/],
      ["/device?$foo=1", /\$foo/],
      ["/device?$expand=device_tag($foo=1)", /\$foo/],
      ["/device?$filter=id eq 'x'", /id/],
      ["/device?$filter=device_name gt 5", /device_name/],
      ["/device?$filter=is_online eq 1", /is_online/],
      ["/device?$filter=created_at gt 'yesterday'", /created_at/],
      ["/device?$filter=contains(id,'1')", /contains/],
      ["/device?$filter=device_name", /boolean/],
      ["/device?$filter=id in ('a','b')", /id/],
      ["/device?$top=-1", /\$top/],
      ["/device?$skip=-1", /\$skip/],
      ["/device?$top=x", /\$top/],
    ] as const)("%s is a 400 naming the problem", async (path, message) => {
      await fails(path, 400, message);
    });
  });
});
