import { createServer, type Server } from "node:http";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/auth/api-keys.ts";
import { KeyBox } from "../../src/auth/key-box.ts";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/logger.ts";
import { buildModel } from "../../src/model/registry.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { buildServer } from "../../src/server.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// Issue 21: an acceptable incoming x-request-id is kept, anything else replaced by a new id; every
// answer carries it, and so do the request's log line (with the caller's actor), its GraphQL
// errors and the audit row of a proxy command it sent.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ACTOR = 2_000_000;

describe.each(databaseKinds)("request ids on %s", (kind) => {
  let test: TestDatabase;
  let app: FastifyInstance;
  let key: string;
  let supervisor: Server;
  let deviceId: number;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    test = await freshDatabase(kind);
    const logger = createLogger("info", { write: (line: string) => void lines.push(JSON.parse(line)) });
    app = await buildServer({ db: test.db, model: buildModel(), config: loadConfig({}), logger });
    await test.db.query({ text: `INSERT INTO "actor" ("id") VALUES ($1::int4)`, values: [ACTOR] });
    await test.db.query({
      text: `INSERT INTO "user" ("id", "actor", "username", "email", "password", "jwt_secret", "is_admin")
             VALUES ($1::int4, $1::int4, 'ops-admin', 'ops@localhost', 'x', 'x', true)`,
      values: [ACTOR],
    });
    key = await createApiKey(test.db, { actor: ACTOR, name: "ops" });
    await seedDemo(test.db);
    supervisor = createServer((_request, response) => {
      response.setHeader("content-type", "application/json");
      response.end("{}");
    });
    await new Promise<void>((resolve) => supervisor.listen(0, "127.0.0.1", resolve));
    const [secret] = await test.db.query<{ value: string }>({
      text: `SELECT "value" FROM "setting" WHERE "name" = 'supervisor_key_secret'`,
      values: [],
    });
    const [device] = await test.db.query<{ id: number }>({
      text: `UPDATE "device" SET "is_online" = true, "supervisor_api_address" = '127.0.0.1',
               "supervisor_api_port" = $1::int4, "supervisor_api_key_ciphertext" = $2::text,
               "supervisor_version" = '17.0.0'
             WHERE "id" = (SELECT min("id") FROM "device") RETURNING "id"`,
      values: [(supervisor.address() as { port: number }).port, new KeyBox(secret?.value ?? "").seal("k")],
    });
    deviceId = device?.id ?? -1;
  }, 120_000);
  afterAll(async () => {
    if (supervisor) await new Promise((resolve) => supervisor.close(resolve));
    await app?.close();
    await test?.drop();
  });

  const send = (
    url: string,
    headers: Record<string, string> = {},
    method: "GET" | "POST" = "GET",
    body?: object,
  ) =>
    app.inject({
      method,
      url,
      headers: body ? { "content-type": "application/json", ...headers } : headers,
      ...(body ? { payload: JSON.stringify(body) } : {}),
    });
  const lineOf = (id: string) => lines.find((line) => line.msg === "request" && line.reqId === id);

  it("keeps an acceptable x-request-id and returns it", async () => {
    for (const id of ["abc", "lb-7f3e.2024:09_x", "A".repeat(128)]) {
      const answer = await send("/ping", { "x-request-id": id });
      expect(answer.headers["x-request-id"]).toBe(id);
    }
  });

  it("replaces a missing, empty, long or odd one with a new UUID", async () => {
    for (const id of [undefined, "", "A".repeat(129), "has space", "a/b", "x\u00e9", '"quoted"']) {
      const answer = await send("/ping", id === undefined ? {} : { "x-request-id": id });
      expect(answer.headers["x-request-id"], String(id)).toMatch(UUID);
    }
    const one = await send("/ping");
    const two = await send("/ping");
    expect(one.headers["x-request-id"]).not.toBe(two.headers["x-request-id"]);
  });

  it("returns it on errors too: 404, 401, 400, 413", async () => {
    expect((await send("/no/such", { "x-request-id": "e-404" })).headers["x-request-id"]).toBe("e-404");
    const refused = await send("/v6/device", { "x-request-id": "e-401", authorization: "Bearer nope" });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers["x-request-id"]).toBe("e-401");
    const bad = await send("/v6/device?$filter=nope eq 1", { "x-request-id": "e-400" });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers["x-request-id"]).toBe("e-400");
    const large = await send("/login_", { "x-request-id": "e-413" }, "POST", {
      password: "x".repeat(20_000),
    });
    expect(large.statusCode).toBe(413);
    expect(large.headers["x-request-id"]).toBe("e-413");
  });

  it("logs it on the request line with the caller's actor id", async () => {
    await send("/v6/device?$top=1", { "x-request-id": "log-actor", authorization: `Bearer ${key}` });
    await send("/v6/application?$top=1", { "x-request-id": "log-anonymous" });
    expect(lineOf("log-actor")).toMatchObject({ status: 200, actor: ACTOR, statements: 1 });
    expect(lineOf("log-anonymous")).toMatchObject({ status: 200 });
    expect(lineOf("log-anonymous")).not.toHaveProperty("actor");
  });

  it("puts it in every GraphQL error's extensions", async () => {
    const headers = { "x-request-id": "gql-1", authorization: `Bearer ${key}` };
    const invalid = await send("/graphql", headers, "POST", { query: "{ noSuchField }" });
    const execution = await send("/graphql", { ...headers, "x-request-id": "gql-2" }, "POST", {
      query: `mutation { supervisorBlink(target: { uuid: "${"f".repeat(32)}" }) { targets } }`,
    });
    const syntax = await send("/graphql", { ...headers, "x-request-id": "gql-3" }, "POST", { query: "{" });
    const errorsOf = (body: string) =>
      (JSON.parse(body) as { errors: { extensions: Record<string, unknown> }[] }).errors;
    expect(errorsOf(invalid.body)[0]?.extensions).toMatchObject({
      code: "GRAPHQL_VALIDATION_FAILED",
      requestId: "gql-1",
    });
    expect(errorsOf(execution.body)[0]?.extensions).toMatchObject({ code: "NOT_FOUND", requestId: "gql-2" });
    expect(errorsOf(syntax.body)[0]?.extensions).toMatchObject({ requestId: "gql-3" });
    const tooLarge = await send("/graphql", { ...headers, "x-request-id": "gql-4" }, "POST", {
      query: `{ ${"a".repeat(200_000)} }`,
    });
    expect(tooLarge.statusCode).toBe(413);
    expect(errorsOf(tooLarge.body)[0]?.extensions).toMatchObject({ requestId: "gql-4" });
  });

  it("records it in the audit row of a proxy command, over HTTP and GraphQL; no API reads it", async () => {
    const authorization = `Bearer ${key}`;
    const http = await send("/supervisor/v1/blink", { "x-request-id": "audit-http", authorization }, "POST", {
      deviceId,
    });
    expect(http.statusCode, http.body).toBe(200);
    const graphql = await send("/graphql", { "x-request-id": "audit-graphql", authorization }, "POST", {
      query: `mutation { supervisorBlink(target: { deviceId: ${deviceId} }) { targets } }`,
    });
    expect(JSON.parse(graphql.body)).toEqual({ data: { supervisorBlink: { targets: 1 } } });
    const rows = await test.db.query<{ request_id: string }>({
      text: `SELECT "request_id" FROM "supervisor_command" ORDER BY "id"`,
      values: [],
    });
    expect(rows.map((row) => row.request_id)).toEqual(["audit-http", "audit-graphql"]);
    const hidden = await send("/v6/supervisor_command?$select=request_id", { authorization });
    expect(hidden.statusCode).toBe(400);
  });

  it("sets the keep-alive and header time-outs above a balancer's idle time-out", () => {
    expect(app.server.keepAliveTimeout).toBe(72_000);
    expect(app.server.headersTimeout).toBe(75_000);
  });
});
