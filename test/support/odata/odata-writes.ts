import { afterAll, beforeAll, expect } from "vitest";
import { buildFixture, type Fixture } from "../core/read-fixture.ts";
import type { DatabaseKind } from "../databases.ts";
import { injectJson, type JsonReply, type Method } from "../inject-json.ts";
import { startTestServer, type TestServer } from "../server.ts";
import { basicWorld, World } from "./write-world.ts";

// What the OData write tests (test/odata/write-*.test.ts) share: a server of their own for the
// describe block, requests to /v6, reads of the rows a write touched, and the checks of a write's
// answer. Expectations are computed in JavaScript from the rows a test inserted or read before the
// write; a write's effect is checked by reading the rows of the test's world afterwards.

export type Row = Record<string, unknown>;

export const link = (id: number | null | undefined) =>
  id === null || id === undefined ? null : { __id: id };
export const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;
export const HEX32 = /^[0-9a-f]{32}$/;

/**
 * Starts the server (and, with `fixture`, the read tests' data set) before the enclosing describe
 * block's tests and closes it after them; the helpers work on that server.
 */
export function odataWrites(kind: DatabaseKind, options: { fixture?: boolean } = {}) {
  let started: TestServer | undefined;
  let data: Fixture | undefined;
  beforeAll(async () => {
    started = await startTestServer(kind);
    if (options.fixture) data = await buildFixture(started.test.db);
  });
  afterAll(() => started?.close());

  function server(): TestServer {
    if (!started) throw new Error("the server is not started yet");
    return started;
  }
  function fixture(): Fixture {
    if (!data) throw new Error("odataWrites was not asked for the fixture");
    return data;
  }

  const call = (method: Method, path: string, payload?: unknown, headers: Record<string, string> = {}) =>
    injectJson(server(), method, `/v6${path}`, payload, headers);

  /** A raw body text (to send JSON that is not an object). */
  async function callRaw(method: "POST" | "PATCH" | "PUT", path: string, text: string): Promise<JsonReply> {
    const response = await server().app.inject({
      method,
      url: `/v6${path}`,
      headers: { "content-type": "application/json" },
      payload: text,
    });
    return {
      status: response.statusCode,
      headers: response.headers,
      body: JSON.parse(response.body),
      raw: response.body,
    };
  }

  async function rows(path: string): Promise<Row[]> {
    const reply = await call("GET", path);
    expect(reply.status, reply.raw).toBe(200);
    return (reply.body as { d: Row[] }).d;
  }

  async function one(resource: string, id: number): Promise<Row | undefined> {
    const found = await rows(`/${resource}(${id})`);
    expect(found.length).toBeLessThanOrEqual(1);
    return found[0];
  }

  /** The rows of `resource` with these ids, as a GET shows them, by id. */
  async function snapshot(resource: string, ids: readonly number[]): Promise<Row[]> {
    if (ids.length === 0) return [];
    return rows(`/${resource}?$filter=id in (${ids.join(", ")})&$orderby=id`);
  }

  function expectOk(reply: JsonReply, affected: number): void {
    expect(reply.status, reply.raw).toBe(200);
    expect(reply.body, reply.raw).toBe("OK");
    expect(reply.raw).toBe('"OK"');
    expect(reply.headers["x-affected-rows"], reply.raw).toBe(String(affected));
  }

  function expectError(reply: JsonReply, status: number, message: RegExp): void {
    expect(reply.status, reply.raw).toBe(status);
    expect(typeof reply.body, reply.raw).toBe("string");
    expect(reply.body).toMatch(message);
  }

  function expectCreated(reply: JsonReply, resource: string): Row {
    expect(reply.status, reply.raw).toBe(201);
    const entity = reply.body as Row;
    expect(typeof entity.id, reply.raw).toBe("number");
    expect(reply.headers.location).toBe(`/v6/${resource}(${entity.id})`);
    return entity;
  }

  /** A POST's body is the entity exactly as a GET by key then returns it. */
  async function expectCreatedAsRead(reply: JsonReply, resource: string): Promise<Row> {
    const entity = expectCreated(reply, resource);
    expect(entity).toEqual(await one(resource, entity.id as number));
    return entity;
  }

  async function billingEventsOf(ids: readonly number[]): Promise<Row[]> {
    return rows(`/billing_event?$filter=device in (${ids.join(", ")})&$orderby=device`);
  }

  return {
    server,
    fixture,
    world: (label: string) => new World(server().test.db, label),
    /** The small fleet setup most tests start from. */
    basicWorld: (label: string) => basicWorld(server().test.db, label),
    call,
    callRaw,
    rows,
    one,
    snapshot,
    expectOk,
    expectError,
    expectCreated,
    expectCreatedAsRead,
    billingEventsOf,
  };
}
