import { afterAll, beforeAll, expect } from "vitest";
import type { Application, Device } from "../../../src/generated/prisma/client.ts";
import { buildFixture, type Fixture } from "../core/read-fixture.ts";
import type { DatabaseKind } from "../databases.ts";
import { SETUP_TIMEOUT_MS } from "../demo-server.ts";
import { startTestServer, type TestServer } from "../server.ts";
import { hiddenColumns, linkColumns, type Row } from "./pine-wire.ts";

// What the OData read tests (test/odata/read-*.test.ts) share: the server on the rows
// ../core/read-fixture.ts inserts, and the rows as the pinejs wire shows them, written out by hand so that
// an expectation is computed in JavaScript, never by asking the compiler or SQL.

export type { Row };

/**
 * A row's stored columns as the pinejs wire shows them by default: ISO timestamps, links as {__id},
 * hidden columns gone. Computed fields are left to the test that selects them (./pine-wire.ts's
 * `wire` adds them from the row's relations).
 */
export function wire(resource: string, row: object): Row {
  const links = linkColumns[resource] ?? [];
  const hidden = hiddenColumns[resource] ?? [];
  const out: Row = {};
  for (const [key, value] of Object.entries(row)) {
    if (hidden.includes(key)) continue;
    if (links.includes(key)) out[key] = value === null ? null : { __id: value };
    else out[key] = value instanceof Date ? value.toISOString() : value;
  }
  return out;
}

/** The named fields of the wire row, in that order. */
export function pick(resource: string, row: object, fields: readonly string[]): Row {
  const full = wire(resource, row);
  return Object.fromEntries(fields.map((field) => [field, full[field]]));
}

export const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;
/** Code-point order, which is what the test databases' C collation sorts by. */
export const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
export const idsOf = (rows: readonly { id: number }[]) => rows.map((row) => ({ id: row.id }));
export const isoDate = (date: Date | null) => date?.toISOString().slice(0, 10) ?? null;

export interface ODataReads {
  /** Set in `beforeAll`, as `fx`: read them inside tests only. */
  readonly server: TestServer;
  readonly fx: Fixture;
  appById(id: number): Application;
  devicesOf(app: Application): Device[];
  tagsOf(d: Device): Fixture["deviceTags"];
  /** A successful GET of /v6<path>: 200, JSON, one SQL statement; returns the parsed body. */
  ok(path: string): Promise<unknown>;
  /** A failed GET of /v6<path>: the status, and the message as a JSON string body. */
  fails(path: string, status: number, message: RegExp): Promise<void>;
  /** `/device?$select=id&$filter=<filter>` is exactly the fixture's devices for which `predicate` holds. */
  expectDevices(filter: string, predicate: (d: Device) => boolean): Promise<void>;
}

/** Registers, in the calling `describe`, the server on a fresh `kind` database with the read fixture. */
export function useODataReads(kind: DatabaseKind): ODataReads {
  let server: TestServer;
  let fx: Fixture;

  beforeAll(async () => {
    server = await startTestServer(kind);
    fx = await buildFixture(server.test.db);
  }, SETUP_TIMEOUT_MS);
  afterAll(() => server.close());

  async function ok(path: string): Promise<unknown> {
    const response = await server.app.inject({ method: "GET", url: `/v6${path}` });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    expect(response.headers["x-sql-statements"]).toBe("1");
    return JSON.parse(response.body);
  }

  return {
    get server() {
      return server;
    },
    get fx() {
      return fx;
    },
    appById: (id) => fx.applications.find((a) => a.id === id) as Application,
    devicesOf: (app) => fx.devices.filter((d) => d.belongs_to__application === app.id),
    tagsOf: (d) => fx.deviceTags.filter((t) => t.device === d.id),
    ok,
    async fails(path, status, message) {
      const response = await server.app.inject({ method: "GET", url: `/v6${path}` });
      expect(response.statusCode, response.body).toBe(status);
      const body: unknown = JSON.parse(response.body);
      expect(typeof body, response.body).toBe("string");
      expect(body).toMatch(message);
    },
    async expectDevices(filter, predicate) {
      const body = await ok(`/device?$select=id&$filter=${filter}`);
      expect(body).toEqual({ d: idsOf(fx.devices.filter(predicate).sort(byId)) });
    },
  };
}
