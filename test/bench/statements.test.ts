import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withoutTypenames } from "../../bench/apollo-request.ts";
import {
  ALIASES,
  aliasVariables,
  type BenchRequest,
  type Workload,
  workloads,
} from "../../bench/workloads.ts";
import { createApiKey } from "../../src/auth/api-keys.ts";
import { demoLogin, seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// The benchmark's own requests (bench/workloads.ts), so a change that adds a statement to what
// `npm run bench` measures fails here first, on both databases.

// A uuid no device has: W4d's alias of it answers null, in the same statement as the others.
const MISSING = "0".repeat(32);

// Until the GraphQL server exists its route is expected to be missing; once src/graphql exists a
// 404 is a failure, not a skip.
const graphqlBuilt = existsSync(fileURLToPath(new URL("../../src/graphql", import.meta.url)));

describe.each(databaseKinds)("statements per benchmark request on %s", (kind) => {
  let server: TestServer;
  const keys = { uuid: "", fleet: "", uuids: "" };
  // The user variants (W1u, …) are sent by the demo user, a member of the demo fleets'
  // organization, so their statements go through a member's permission predicate.
  let memberKey = "";
  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    const [member] = await server.test.db.query<{ actor: number }>({
      text: `SELECT actor FROM "user" WHERE username = $1`,
      values: [demoLogin.username],
    });
    memberKey = await createApiKey(server.test.db, { actor: member?.actor as number, name: "bench member" });
    const devices = await server.app.inject({
      method: "GET",
      url: "/v6/device?$select=uuid,belongs_to__application&$filter=is_online eq true&$top=1",
    });
    const [device] = JSON.parse(devices.body).d as {
      uuid: string;
      belongs_to__application: { __id: number };
    }[];
    if (!device) throw new Error("the demo data has no online device");
    keys.uuid = device.uuid;
    keys.fleet = String(device.belongs_to__application.__id);
    // W4d's aliases: every device of the demo data, repeated up to 300, and one that does not exist.
    const every = await server.app.inject({ method: "GET", url: "/v6/device?$select=uuid" });
    keys.uuids = [...(JSON.parse(every.body).d as { uuid: string }[]).map((row) => row.uuid), MISSING].join(
      ",",
    );
  });
  afterAll(() => server?.close());

  const send = (request: BenchRequest, caller: Workload["caller"]) =>
    server.app.inject({
      method: request.method,
      url: request.path,
      ...(request.body === undefined ? {} : { payload: request.body }),
      headers: {
        ...request.headers,
        ...(caller === "user" ? { authorization: `Bearer ${memberKey}` } : {}),
      },
    });

  it.each(workloads.filter((workload) => workload.group !== "W4"))(
    "$id ($title) runs $expectedStatements statement",
    async (workload) => {
      const response = await send(workload.build(keys[workload.keys]), workload.caller);
      expect(response.statusCode, response.body).toBe(200);
      expect(JSON.parse(response.body).d.length).toBeGreaterThan(0);
      expect(response.headers["x-sql-statements"]).toBe(String(workload.expectedStatements));
    },
  );

  it.each(workloads.filter((workload) => workload.group === "W4"))(
    "$id ($title) runs $expectedStatements statement",
    async (workload) => {
      const response = await send(workload.build(keys[workload.keys]), workload.caller);
      if (!graphqlBuilt) {
        expect(response.statusCode).toBe(404);
        return;
      }
      expect(response.statusCode, response.body).toBe(200);
      const body = JSON.parse(response.body) as { data?: Record<string, unknown>; errors?: unknown };
      expect(body.errors, response.body).toBeUndefined();
      // Every root field answers; W4d's aliases of a uuid no device has are its only nulls.
      const aliased = workload.keys === "uuids";
      const values = Object.values(body.data ?? {});
      expect(values.length).toBe(aliased ? ALIASES : 1);
      const missing = aliased ? Object.values(aliasVariables(keys.uuids)).filter((u) => u === MISSING) : [];
      expect(values.filter((value) => value === null).length).toBe(missing.length);
      expect(response.headers["x-sql-statements"]).toBe(String(workload.expectedStatements));
    },
  );

  // Issue 47: Apollo Client 4's own request (its Accept, extensions and __typenames) is answered
  // as the hand-written one is, in the media type it prefers.
  it.each(workloads.filter((workload) => workload.handWritten))(
    "$id answers as its plain request does",
    async (workload) => {
      const lead = workload.handWritten as Workload;
      const key = keys[workload.keys];
      const request = workload.build(key);
      expect(request.headers?.accept).toBe("application/graphql-response+json,application/json;q=0.9");
      expect(JSON.parse(request.body ?? "{}").extensions.clientLibrary.name).toBe("@apollo/client");
      const apollo = await send(request, workload.caller);
      const plain = await send(lead.build(key), lead.caller);
      expect(apollo.headers["content-type"]).toBe("application/graphql-response+json; charset=utf-8");
      expect(apollo.body).toMatch(/"__typename"/);
      expect(withoutTypenames(JSON.parse(apollo.body))).toEqual(JSON.parse(plain.body));
    },
  );
});
