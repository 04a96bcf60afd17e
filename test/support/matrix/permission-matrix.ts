import { afterAll, beforeAll, expect } from "vitest";
import type { DatabaseKind } from "../databases.ts";
import { injectJson, type JsonReply, type Method } from "../inject-json.ts";
import { startTestServer, type TestServer } from "../server.ts";
import { buildMatrixWorld, type World, whoIs } from "./matrix-build.ts";
import {
  type ActorName,
  actorNames,
  loadState,
  Oracle,
  type ResourceName,
  type Row,
  resourceNames,
  type State,
  type Table,
  tableRows,
} from "./matrix-world.ts";

// Issue 5's permission matrix (test/auth/permission-matrix-*.test.ts): every resource × action × kind
// of caller, against a world built through the public API as the admin. Expectations come from the
// oracle in matrix-world.ts (the rules in JavaScript over the rows Prisma reads back); every
// write is checked against the database, row by row, before and after.

export type Action =
  | "collection read"
  | "key read"
  | "filter into the other org"
  | "expand into the other org"
  | "create"
  | "patch by key"
  | "bulk patch by $filter"
  | "delete by key"
  | "bulk delete by $filter";

export const readActions: readonly Action[] = [
  "collection read",
  "key read",
  "filter into the other org",
  "expand into the other org",
];
export const writeActions: readonly Action[] = [
  "create",
  "patch by key",
  "bulk patch by $filter",
  "delete by key",
  "bulk delete by $filter",
];

export interface Cell {
  readonly resource: ResourceName;
  readonly action: Action;
  readonly actor: ActorName;
}

// Billing events are the server's record: no API writes them, so they are in the read matrix only.
export const writtenResources = resourceNames.filter((resource) => resource !== "billing_event");

export const cellsOf = (actions: readonly Action[], resources = resourceNames): Cell[] =>
  resources.flatMap((resource) =>
    actions.flatMap((action) => actorNames.map((actor) => ({ resource, action, actor }))),
  );

/** The server, the world built on it, and the database right after the world was built. */
export interface MatrixFixture {
  readonly server: TestServer;
  readonly world: World;
  readonly built: State;
}

/**
 * Builds the matrix's world on a server of its own before the enclosing describe block's tests, and
 * closes it after them; the helpers send requests as each kind of caller and read the database back.
 */
export function permissionMatrix(kind: DatabaseKind) {
  let fixture: MatrixFixture | undefined;
  beforeAll(async () => {
    const server = await startTestServer(kind);
    const world = await buildMatrixWorld(server);
    fixture = { server, world, built: await loadState(server.test.db.prisma) };
  }, 180_000);
  afterAll(() => fixture?.server.close());

  function current(): MatrixFixture {
    if (!fixture) throw new Error("the matrix's world is not built yet");
    return fixture;
  }

  let serial = 0;
  const unique = (prefix: string) => {
    serial += 1;
    return `${prefix}-${serial}`;
  };

  const prisma = () => current().server.test.db.prisma;

  function call(
    actor: ActorName,
    method: Method,
    path: string,
    payload?: unknown,
    extraHeaders: Record<string, string> = {},
  ): Promise<JsonReply> {
    const { creds } = current().world;
    const headers: Record<string, string> = {};
    let url = path;
    switch (actor) {
      case "admin":
        break;
      case "alice":
        headers.authorization = `Bearer ${creds.alice}`;
        break;
      case "bob":
        headers.authorization = `Bearer ${creds.bob}`;
        break;
      case "outsider":
        headers.authorization = `Bearer ${creds.outsider}`;
        break;
      case "device":
        headers.authorization = `Bearer ${creds.device}`;
        break;
      case "fleet":
        // The provisioning key goes in the query string, as `?apikey=`.
        headers.authorization = "";
        url += `${url.includes("?") ? "&" : "?"}apikey=${creds.fleet}`;
        break;
      case "none":
        headers.authorization = "";
        break;
    }
    Object.assign(headers, extraHeaders);
    return injectJson(current().server, method, url, payload, headers);
  }

  async function created(path: string, payload: unknown, actor: ActorName = "admin"): Promise<number> {
    const reply = await call(actor, "POST", `/v6/${path}`, payload);
    expect(reply.status, `POST ${path} ${reply.raw}`).toBe(201);
    return (reply.body as { id: number }).id;
  }

  async function text(actor: ActorName, url: string, payload: unknown = {}): Promise<string> {
    const reply = await call(actor, "POST", url, payload);
    expect(reply.status, `POST ${url} ${reply.raw}`).toBe(200);
    return typeof reply.body === "string" ? reply.body : reply.raw;
  }

  const lastId = async (table: Table) => (await tableRows(prisma(), table)).at(-1)?.id ?? 0;

  const oracle = (actor: ActorName, state: State) => new Oracle(state, whoIs(current().world, actor, state));

  /** The ids a GET answers, or the reply when it is no 200. */
  async function readIds(actor: ActorName, path: string): Promise<number[] | JsonReply> {
    const reply = await call(actor, "GET", path);
    if (reply.status !== 200) return reply;
    return ((reply.body as { d: Row[] }).d ?? []).map((row) => row.id);
  }

  return { fixture: current, unique, prisma, call, created, text, lastId, oracle, readIds };
}

const json = (row: Row | undefined) => JSON.stringify(row);

/** The ids of the rows a write added, removed or changed. */
export function changedIds(before: readonly Row[], after: readonly Row[]): number[] {
  const old = new Map(before.map((r) => [r.id, json(r)]));
  const now = new Map(after.map((r) => [r.id, json(r)]));
  const ids = new Set([...old.keys(), ...now.keys()]);
  return [...ids].filter((id) => old.get(id) !== now.get(id)).sort((a, b) => a - b);
}

/** A write's answer in a line: the status, and for a 200 its body and x-affected-rows. */
export const outcome = (reply: JsonReply) =>
  reply.status === 200
    ? `200 ${String(reply.body)} rows=${String(reply.headers["x-affected-rows"])}`
    : `${reply.status}`;
