import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The rule of the read path: one SQL statement per GET, whatever the depth of $expand or the filter.
const reads = [
  "/v6/device?$select=id,uuid&$filter=uuid eq 'x'",
  "/v6/device(1)",
  "/v6/device/$count?$filter=is_online eq true",
  "/v6/application?$count=true&$expand=owns__device($select=id;$filter=is_online eq true;$expand=belongs_to__application($select=app_name;$expand=owns__release/$count)),owns__release/$count",
  "/v6/application?$filter=owns__device/any(d:d/device_tag/any(t:t/tag_key eq d/device_name)) or owns__device/$count gt 3&$orderby=owns__device/$count desc",
  "/v6/device?$filter=belongs_to__application/organization/handle eq 'demo'&$orderby=belongs_to__application/app_name,device_name desc&$top=5&$skip=2",
];

describe.each(databaseKinds)("statements per read on %s", (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
  });
  afterAll(() => server.close());

  it.each(reads)("GET %s runs exactly one statement", async (url) => {
    const response = await server.app.inject({ method: "GET", url });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers["x-sql-statements"]).toBe("1");
  });
});
