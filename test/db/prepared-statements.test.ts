import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminPermissions } from "../../src/auth/permissions.ts";
import { planRead } from "../../src/core/plan.ts";
import { compileRead } from "../../src/core/sql/compile.ts";
import type { Database } from "../../src/db/database.ts";
import { openPostgres } from "../../src/db/postgres.ts";
import { buildModel } from "../../src/model/registry.ts";
import { parse } from "../../src/odata/parse/parse.ts";
import { read } from "../../src/odata/read.ts";
import { buildVersions } from "../../src/odata/versions/index.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

describe.runIf(databaseKinds.includes("postgres"))("reads on PostgreSQL", () => {
  let test: TestDatabase;
  let single: Database;
  const model = buildModel();
  const versions = buildVersions(model);
  beforeAll(async () => {
    test = await freshDatabase("postgres");
    // One connection, so the session whose prepared statements we list is the one that ran the read.
    single = openPostgres({ url: test.url as string, poolSize: 1 });
  });
  afterAll(async () => {
    await single.close();
    await test.drop();
  });

  it("run as named prepared statements, planned once per connection", async () => {
    const url = "/device?$select=id&$filter=uuid eq 'abc'";
    const context = { db: single, model, versions, permissions: adminPermissions };
    await read({ version: "v6", url, headers: {} }, context);
    await read({ version: "v6", url: "/device?$select=id&$filter=uuid eq 'other'", headers: {} }, context);
    const { text } = compileRead(
      planRead(parse(url), { model, permissions: adminPermissions, format: "pinejs" }),
    );
    const prepared = await single.query<{ name: string; statement: string }>({
      text: "SELECT name, statement FROM pg_prepared_statements WHERE statement = $1",
      values: [text],
    });
    // Two reads with different values share one statement: the values are parameters.
    expect(prepared).toHaveLength(1);
    expect(prepared[0]?.name).toMatch(/^fg_/);
  });
});
