import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The expansion cycle of issue 16: every device, its fleet, every device of that fleet, … Each
// level without $top multiplies what the statement builds by the size of a fleet.
const cycle = (depth: number, top = ""): string => {
  let expand = "";
  for (let level = 0; level < depth; level++) {
    expand = `belongs_to__application($expand=owns__device(${top}${expand ? `${top ? ";" : ""}$expand=${expand}` : ""}))`;
  }
  return expand;
};

describe.each(databaseKinds)("OData read limits on %s", (kind) => {
  let server: TestServer;
  let strict: TestServer;
  let devices: number;
  beforeAll(async () => {
    server = await startTestServer(kind);
    devices = (await seedDemo(server.test.db)).devices;
    // Tiny limits, so a handful of demo rows is over them.
    strict = await startTestServer(kind, {
      ODATA_MAX_COST: "30",
      ODATA_UNBOUNDED_ROWS: "5",
      ODATA_MAX_EXPAND_DEPTH: "2",
    });
    await seedDemo(strict.test.db);
  });
  afterAll(async () => {
    await server?.close();
    await strict?.close();
  });

  const get = (on: TestServer, url: string) => on.app.inject({ method: "GET", url });

  it("refuses the nested expansion cycle before it runs, naming the limit and where to add $top", async () => {
    // Four nested unbounded levels (the cycle's two, then each device's tags): 1000⁴ and more.
    const deepest = cycle(2).replace("owns__device()", "owns__device($expand=device_tag)");
    const reply = await get(server, `/v6/device?$expand=${deepest}`);
    expect(reply.statusCode).toBe(400);
    const message = JSON.parse(reply.body) as string;
    expect(message).toMatch(
      /could produce up to 1001002002000 rows, more than the limit of 10000000000 \(ODATA_MAX_COST\)/,
    );
    expect(message).toMatch(/without \$top counts as 1000 rows/);
    expect(message).toContain(
      "add $top to belongs_to__application/owns__device, belongs_to__application/owns__device/belongs_to__application/owns__device, belongs_to__application/owns__device/belongs_to__application/owns__device/device_tag",
    );
    // Refused before compiling: no statement ran.
    expect(reply.headers["x-sql-statements"]).toBe("0");
  });

  it("runs the same cycle when $top bounds it, or when it starts from one device", async () => {
    const bounded = await get(server, `/v6/device?$top=2&$expand=${cycle(2, "$top=2")}`);
    expect(bounded.statusCode).toBe(200);
    expect(JSON.parse(bounded.body).d).toHaveLength(2);
    const [first] = JSON.parse((await get(server, "/v6/device?$top=1&$select=id")).body).d;
    const byKey = await get(server, `/v6/device(${first.id})?$expand=${cycle(1)}`);
    expect(byKey.statusCode).toBe(200);
  });

  it("refuses $expand nested deeper than ODATA_MAX_EXPAND_DEPTH", async () => {
    const reply = await get(
      strict,
      "/v6/device?$top=1&$expand=belongs_to__application($expand=organization($expand=application($top=1)))",
    );
    expect(reply.statusCode).toBe(400);
    expect(JSON.parse(reply.body)).toBe(
      "$expand nests 3 levels deep (belongs_to__application/organization/application), more than the limit of 2 (ODATA_MAX_EXPAND_DEPTH)",
    );
  });

  it("counts an expansion without $top as ODATA_UNBOUNDED_ROWS but never cuts it short", async () => {
    // 1 fleet by key + 5 (its devices, counted) = 6 ≤ 30: allowed, and every device comes back.
    const fleets = JSON.parse((await get(strict, "/v6/application?$select=id")).body).d as { id: number }[];
    const counts = await Promise.all(
      fleets.map(async (fleet) => {
        const reply = await get(strict, `/v6/application(${fleet.id})?$expand=owns__device($select=id)`);
        expect(reply.statusCode).toBe(200);
        return (JSON.parse(reply.body).d[0].owns__device as unknown[]).length;
      }),
    );
    expect(counts.reduce((a, b) => a + b, 0)).toBe(devices);
    expect(Math.max(...counts)).toBeGreaterThan(5);
  });

  it("refuses an unbounded expansion under an unbounded collection over ODATA_MAX_COST, and $top fixes it", async () => {
    // 5 fleets (counted) + 5 × 5 devices = 30 ≤ 30 passes; their tags too is 5 + 25 + 125.
    expect((await get(strict, "/v6/application?$expand=owns__device($select=id)")).statusCode).toBe(200);
    const over = await get(strict, "/v6/application?$expand=owns__device($expand=device_tag)");
    expect(over.statusCode).toBe(400);
    expect(JSON.parse(over.body)).toMatch(
      /^This request could produce up to 155 rows, more than the limit of 30 \(ODATA_MAX_COST\).*add \$top to owns__device, owns__device\/device_tag$/,
    );
    const fixed = await get(
      strict,
      "/v6/application?$top=2&$expand=owns__device($top=3;$expand=device_tag($top=2))",
    );
    expect(fixed.statusCode).toBe(200);
  });

  it("leaves $count and to-one expansions at one row per parent", async () => {
    const reply = await get(
      strict,
      "/v6/device?$top=10&$expand=belongs_to__application($expand=organization),device_tag/$count",
    );
    expect(reply.statusCode).toBe(200);
    expect((await get(strict, "/v6/device/$count")).statusCode).toBe(200);
  });
});
