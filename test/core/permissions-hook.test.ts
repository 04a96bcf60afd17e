import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Permissions } from "../../src/auth/permissions.ts";
import { sql } from "../../src/db/sql.ts";
import { buildModel } from "../../src/model/registry.ts";
import { read } from "../../src/odata/read.ts";
import { buildVersions } from "../../src/odata/versions/index.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// A restrictive caller: sees even-numbered devices and every fleet but the second. The compiler must
// AND that in wherever a table is read: root, key, expansions, path joins, any/all and counts.
const restricted: Permissions = {
  readable(resource, row) {
    if (resource.table === "device") return sql`${row}."id" % 2 = 0`;
    if (resource.table === "application") return sql`${row}."id" <> 2`;
    return sql`TRUE`;
  },
  writable: () => sql`FALSE`,
};

describe.each(databaseKinds)("the row predicate on %s", (kind) => {
  let test: TestDatabase;
  const model = buildModel();
  const versions = buildVersions(model);
  const get = async (url: string) => {
    const reply = await read(
      { version: "v6", url, headers: {} },
      { db: test.db, model, versions, permissions: restricted },
    );
    return JSON.parse(reply.body).d;
  };
  beforeAll(async () => {
    test = await freshDatabase(kind);
    await seedDemo(test.db);
  });
  afterAll(() => test.drop());

  it("filters the root table and keys", async () => {
    const devices: { id: number }[] = await get("/device?$select=id");
    expect(devices.map((d) => d.id)).toEqual(Array.from({ length: 30 }, (_, i) => 2 * (i + 1)));
    expect(await get("/device(1)")).toEqual([]);
    expect(await get("/application(2)")).toEqual([]);
    // The demo's fleets (the catalogue's host OS fleets, with no devices, come after them).
    expect(
      (await get("/application?$select=id&$filter=not is_host")).map((a: { id: number }) => a.id),
    ).toEqual([1, 3]);
  });

  it("filters counts", async () => {
    expect(await get("/device/$count")).toBe(30);
    expect(await get("/device/$count?$filter=belongs_to__application eq 2")).toBe(10);
  });

  it("filters expansions and their counts", async () => {
    const [fleet] = await get(
      "/application(1)?$select=id&$expand=owns__device($select=id),owns__release/$count",
    );
    expect(fleet.owns__device.map((d: { id: number }) => d.id)).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18, 20]);
    const [counted] = await get("/application(1)?$select=id&$expand=owns__device/$count");
    expect(counted.owns__device).toBe(10);
    // A device of the hidden fleet: the fleet does not exist for this caller.
    const [device] = await get("/device(22)?$select=id&$expand=belongs_to__application($select=id)");
    expect(device.belongs_to__application).toEqual([]);
  });

  it("filters path joins, any, all and $count in filters", async () => {
    expect(
      await get("/device?$select=id&$filter=belongs_to__application/app_name eq 'weather-stations'"),
    ).toEqual([]);
    expect(await get("/application?$select=id&$filter=owns__device/any(d:d/id eq 1)")).toEqual([]);
    const allEven = await get(
      "/application?$select=id&$filter=not is_host and owns__device/all(d:d/id mod 2 eq 0)",
    );
    expect(allEven.map((a: { id: number }) => a.id)).toEqual([1, 3]);
    const tenVisible = await get("/application?$select=id&$filter=owns__device/$count eq 10");
    expect(tenVisible.map((a: { id: number }) => a.id)).toEqual([1, 3]);
  });

  it("reads a key through a to-one path by its foreign key, yet only when the linked row is visible", async () => {
    // The foreign key alone names the hidden fleet; through the path the fleet does not exist.
    expect(await get("/device/$count?$filter=belongs_to__application eq 2")).toBe(10);
    expect(await get("/device?$select=id&$filter=belongs_to__application/id eq 2")).toEqual([]);
    expect(await get("/device?$select=id&$filter=belongs_to__application/id in (2)")).toEqual([]);
    // `ne` is the negation of `eq`: the hidden fleet reads as null, and null is not 2.
    expect(await get("/device/$count?$filter=belongs_to__application/id ne 2")).toBe(30);
    expect(await get("/device/$count?$filter=2 eq belongs_to__application/id")).toBe(0);
    // `eq null` is about the path, not the key: the hidden fleet reads as null.
    expect(await get("/device/$count?$filter=belongs_to__application/id eq null")).toBe(10);
    const visible: { id: number }[] = await get("/device?$select=id&$filter=belongs_to__application/id eq 1");
    expect(visible.map((d) => d.id)).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18, 20]);
  });
});
