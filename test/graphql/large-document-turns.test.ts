import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { aliases } from "../../bench/hostile-documents.ts";
import { loadConfig } from "../../src/config.ts";
import type { Database } from "../../src/db/database.ts";
import { SelectionPlanner } from "../../src/graphql/schema/selection.ts";
import { createLogger } from "../../src/logger.ts";
import { buildModel } from "../../src/model/registry.ts";
import { buildServer } from "../../src/server.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// Issue 45: validating a document and planning it each take time that grows with its size. A large
// document not seen before is validated in one turn of the event loop and planned in the next, so
// the server answers what waits in between (how long each turn is, the bench measures: README
// "Hostile documents"). Counted here in turns, not milliseconds: from the request to its statement,
// a large document takes one turn more than a small one. An operation over the cost limit is
// refused once it is planned, not planned again by the executor's cost limit.

describe.each(databaseKinds)("a large GraphQL document on %s", (kind) => {
  let test: TestDatabase;
  let app: Awaited<ReturnType<typeof buildServer>>;
  let turns = 0;
  let firstStatementAt: number | undefined;

  beforeAll(async () => {
    test = await freshDatabase(kind);
    // The turn in which the request's first statement is sent.
    const db = new Proxy(test.db, {
      get(target, property, receiver) {
        if (property !== "query") return Reflect.get(target, property, receiver);
        return (...args: Parameters<Database["query"]>) => {
          firstStatementAt ??= turns;
          return target.query(...args);
        };
      },
    });
    const config = loadConfig({ LOG_LEVEL: "silent" });
    app = await buildServer({ db, model: buildModel(), config, logger: createLogger("silent") });
  }, 120_000);
  afterAll(async () => {
    await app.close();
    await test.drop();
  });

  /** Turns of the event loop from sending `query` to its first statement, and its answer. */
  async function turnsToStatement(query: string) {
    let counting = true;
    turns = 0;
    firstStatementAt = undefined;
    const tick = () => {
      turns++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const response = await app.inject({ method: "POST", url: "/graphql", payload: { query } });
    counting = false;
    return { response, turns: firstStatementAt as number | undefined };
  }

  it("is planned a turn after it is validated", async () => {
    // Loaded once: the first request of GraphQL loads its code.
    await turnsToStatement("{ devicesCount }");
    for (let round = 0; round < 3; round++) {
      const small = await turnsToStatement(aliases(3, "devices { id }", round));
      const large = await turnsToStatement(aliases(600, "devices { id }", round));
      expect(small.response.statusCode).toBe(200);
      expect(large.response.statusCode, large.response.body.slice(0, 300)).toBe(200);
      expect(large.response.headers["x-sql-statements"]).toBe("1");
      expect(large.turns).toBe((small.turns as number) + 1);
    }
  });

  it("refuses an operation over the cost limit once it is planned", async () => {
    const planning = vi.spyOn(SelectionPlanner.prototype, "planRootFields");
    try {
      for (let round = 0; round < 2; round++) {
        planning.mockClear();
        const query = aliases(499, "applications { ownsDevice { deviceTag { id } } }", round);
        const response = await app.inject({ method: "POST", url: "/graphql", payload: { query } });
        expect(response.json().errors?.[0]?.message).toMatch(/more than the limit of/);
        expect(planning).toHaveBeenCalledTimes(1);
      }
    } finally {
      planning.mockRestore();
    }
  });
});
