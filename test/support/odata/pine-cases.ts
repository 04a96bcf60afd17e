import type { Params } from "pinejs-client-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PrismaClient } from "../../../src/generated/prisma/client.ts";
import { seedDemo } from "../../../src/seed/demo.ts";
import { databaseKinds } from "../databases.ts";
import { startTestServer, type TestServer } from "../server.ts";
import { FetchPine } from "./fetch-pine.ts";
import { appInclude, type Row, wire } from "./pine-wire.ts";

// pinejs-client-core, the query builder inside balena-sdk, against a real listener: what the tables of
// cases in test/odata/pinejs-client-*.test.ts share. Every query object is one that
// clients-on-the-wire.md part A records; every expected result is computed with Prisma (plus plain
// JavaScript where Prisma's semantics differ from OData's), never through the OData API.

export const special = "O'Brien & co/100%";
export const nearMiss = "O'Brien & co/1000%";

export function pick(row: Row, keys: readonly string[]): Row {
  return Object.fromEntries(keys.map((key) => [key, row[key]]));
}

/** The demo data, with an empty fleet and tags and a note that hold `special`. */
export interface Fixture {
  readonly p: PrismaClient;
  readonly org: { id: number; handle: string };
  readonly apps: Record<"lights" | "weather" | "kiosks" | "empty", { id: number; slug: string }>;
  /** The devices in id order. */
  readonly devices: readonly { id: number; uuid: string; device_name: string }[];
  readonly release: { id: number; commit: string; belongs_to__application: number };
}

export interface Case {
  readonly name: string;
  readonly params: (f: Fixture) => Params & { resource: string };
  readonly expected: (f: Fixture) => Promise<unknown>;
  /** Collections without $orderby: compare as sets (sorted by id on both sides). */
  readonly unordered?: boolean;
  /** Instead of an exact expected value: a check on the result. */
  readonly check?: (actual: unknown, expected: unknown) => void;
}

const byId = (rows: unknown) =>
  Array.isArray(rows) ? [...rows].sort((a: Row, b: Row) => (a.id as number) - (b.id as number)) : rows;

export const devicesWhere = async (
  f: Fixture,
  where: NonNullable<Parameters<PrismaClient["device"]["findMany"]>[0]>["where"],
) => (await f.p.device.findMany({ where, orderBy: { id: "asc" } })).map((row) => wire("device", row));
export const appsWhere = async (
  f: Fixture,
  where: NonNullable<Parameters<PrismaClient["application"]["findMany"]>[0]>["where"],
) =>
  (await f.p.application.findMany({ where, include: appInclude, orderBy: { id: "asc" } })).map((row) =>
    wire("application", row),
  );
export const allDevices = async (f: Fixture) =>
  (await f.p.device.findMany({ orderBy: { id: "asc" } })).map((row) => row);
export const d = (f: Fixture, i: number) => {
  const device = f.devices[i];
  if (!device) throw new Error(`no device ${i}`);
  return device;
};

async function buildFixture(server: TestServer): Promise<Fixture> {
  await seedDemo(server.test.db);
  const p = server.test.db.prisma;
  const org = await p.organization.findUniqueOrThrow({ where: { handle: "demo" } });
  const app = (slug: string) => p.application.findUniqueOrThrow({ where: { slug } });
  const kiosks = await app("demo/kiosks");
  // An empty fleet: any() and all() differ on it, and its device count is 0.
  const empty = await p.application.create({
    data: {
      app_name: "empty-fleet",
      slug: "demo/empty-fleet",
      Organization: { connect: { id: org.id } },
      DeviceType: { connect: { id: kiosks.is_for__device_type } },
      Actor: { create: {} },
    },
  });
  const devices = await p.device.findMany({ orderBy: { id: "asc" } });
  const tagged = devices.slice(0, 10);
  await p.deviceTag.createMany({
    data: [
      ...tagged.map((device, i) => ({
        device: device.id,
        tag_key: "location",
        value: `Building ${i % 3 === 0 ? "A" : "B"}/Room ${i}`,
      })),
      { device: devices[0]?.id as number, tag_key: special, value: "special-key" },
      { device: devices[1]?.id as number, tag_key: "owner", value: special },
      { device: devices[2]?.id as number, tag_key: "owner", value: nearMiss },
      { device: devices[40]?.id as number, tag_key: "owner", value: special.toUpperCase() },
    ],
  });
  await p.device.update({ where: { id: devices[3]?.id as number }, data: { note: special } });
  const release = await p.release.findFirstOrThrow({
    where: { belongs_to__application: kiosks.id, status: "success" },
    orderBy: { id: "asc" },
  });
  return {
    p,
    org,
    apps: {
      lights: await app("demo/smart-lights"),
      weather: await app("demo/weather-stations"),
      kiosks,
      empty,
    },
    devices,
    release,
  };
}

/** What tests beside a table of cases reach: its server and its client, once started. */
export interface PineContext {
  readonly server: () => TestServer;
  readonly pine: () => FetchPine;
}

/**
 * On each database: a server with the fixture, and one test per case, which sends the case's query
 * through pinejs-client-core and compares the answer with the expected value; then `more`'s tests.
 */
export function describePineCases(cases: readonly Case[], more?: (context: PineContext) => void): void {
  describe.each(databaseKinds)("pinejs-client-core against the API on %s", (kind) => {
    let server: TestServer;
    let pine: FetchPine;
    let fixture: Fixture;

    beforeAll(async () => {
      server = await startTestServer(kind);
      fixture = await buildFixture(server);
      pine = new FetchPine({ apiPrefix: `${server.url}/v6/` });
      pine.authorization = `Bearer ${server.adminKey}`;
    });
    afterAll(() => server.close());

    it.each(cases)("$name", async ({ params, expected, unordered, check }) => {
      const query = params(fixture);
      const url = pine.compile(query);
      const want = await expected(fixture);
      let actual: unknown;
      try {
        actual = await (pine as unknown as { get(p: Params): Promise<unknown> }).get(query);
      } catch (error) {
        throw new Error(`GET /v6/${url} failed: ${(error as Error).message}`);
      }
      if (check) return check(actual, want);
      if (unordered) expect(byId(actual), `GET /v6/${url}`).toEqual(byId(want));
      else expect(actual, `GET /v6/${url}`).toEqual(want);
    });

    more?.({ server: () => server, pine: () => pine });
  });
}
