import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Application, Device } from "../../src/generated/prisma/client.ts";
import { databaseKinds } from "../support/databases.ts";
import {
  byId,
  cmp,
  idsOf,
  ops,
  overallStatus,
  ReadWorld,
  type Row,
  text,
} from "../support/graphql/graphql-reads.ts";

// `where` and `orderBy` through GraphQL, on the fixture of the OData read tests; expectations are
// array code over the rows the fixture inserted.

type DeviceCase = readonly [label: string, where: Row, predicate: (d: Device) => boolean];

const T_LCE = "2025-06-16T05:35:05.185Z";
const T_CREATED = "2023-04-18T03:45:15.000Z";

// Every comparison operator on every scalar type (a link's id is an Int).
const comparisonCases: DeviceCase[] = ops.flatMap((op): DeviceCase[] => [
  [`id ${op} 20`, { id: { [op]: 20 } }, (d) => cmp(op, d.id, 20)],
  [`cpuTemp ${op} 50`, { cpuTemp: { [op]: 50 } }, (d) => cmp(op, d.cpu_temp, 50)],
  [
    `deviceName ${op} light-05`,
    { deviceName: { [op]: "light-05" } },
    (d) => cmp(op, d.device_name, "light-05"),
  ],
  [`note ${op} x`, { note: { [op]: "x" } }, (d) => cmp(op, d.note, "x")],
  [
    `lastConnectivityEvent ${op}`,
    { lastConnectivityEvent: { [op]: T_LCE } },
    (d) => cmp(op, d.last_connectivity_event, new Date(T_LCE)),
  ],
  [`createdAt ${op}`, { createdAt: { [op]: T_CREATED } }, (d) => cmp(op, d.created_at, new Date(T_CREATED))],
  [
    `belongsToApplicationId ${op} 2`,
    { belongsToApplicationId: { [op]: 2 } },
    (d) => cmp(op, d.belongs_to__application, 2),
  ],
]);

const booleanCases: DeviceCase[] = [
  ["isOnline eq true", { isOnline: { eq: true } }, (d) => d.is_online],
  ["isOnline ne true", { isOnline: { ne: true } }, (d) => !d.is_online],
  ["isActive eq false", { isActive: { eq: false } }, (d) => !d.is_active],
  ["isActive isNull false", { isActive: { isNull: false } }, () => true],
  ["isActive eq null", { isActive: { eq: null } }, () => false],
];

const inCases: DeviceCase[] = [
  ["id in [1,2,3]", { id: { in: [1, 2, 3] } }, (d) => [1, 2, 3].includes(d.id)],
  ["id in []", { id: { in: [] } }, () => false],
  ["NOT id in []", { NOT: { id: { in: [] } } }, () => true],
  [
    "deviceName in",
    { deviceName: { in: ["light-01", "Kitchen Light"] } },
    (d) => ["light-01", "Kitchen Light"].includes(d.device_name),
  ],
  ["note in ['x','']", { note: { in: ["x", ""] } }, (d) => d.note === "x" || d.note === ""],
  ["note in []", { note: { in: [] } }, () => false],
  [
    "lastConnectivityEvent in",
    { lastConnectivityEvent: { in: [T_LCE, "2000-01-01T00:00:00Z"] } },
    (d) => d.last_connectivity_event?.toISOString() === T_LCE,
  ],
  [
    "belongsToApplicationId in [1,3]",
    { belongsToApplicationId: { in: [1, 3] } },
    (d) => [1, 3].includes(d.belongs_to__application),
  ],
];

const textCases: DeviceCase[] = [
  ["contains light", { deviceName: { contains: "light" } }, (d) => d.device_name.includes("light")],
  [
    "contains Light (case-sensitive)",
    { deviceName: { contains: "Light" } },
    (d) => d.device_name.includes("Light"),
  ],
  ["contains % (no wildcard)", { deviceName: { contains: "%" } }, (d) => d.device_name.includes("%")],
  ["contains _ (no wildcard)", { deviceName: { contains: "_" } }, (d) => d.device_name.includes("_")],
  ["startsWith light", { deviceName: { startsWith: "light" } }, (d) => d.device_name.startsWith("light")],
  ["startsWith O'", { deviceName: { startsWith: "O'" } }, (d) => d.device_name.startsWith("O'")],
  ["endsWith -01", { deviceName: { endsWith: "-01" } }, (d) => d.device_name.endsWith("-01")],
  ["endsWith %", { deviceName: { endsWith: "%" } }, (d) => d.device_name.endsWith("%")],
  [
    "eq a literal with quotes and slashes",
    { deviceName: { eq: "O'Brien & co/100%" } },
    (d) => d.device_name === "O'Brien & co/100%",
  ],
  ["eq with spaces", { deviceName: { eq: "  padded  " } }, (d) => d.device_name === "  padded  "],
  ["eq non-ASCII", { deviceName: { eq: "café-display" } }, (d) => d.device_name === "café-display"],
  ["contains on a nullable field", { note: { contains: "note" } }, (d) => d.note?.includes("note") === true],
];

const nullCases: DeviceCase[] = [
  ["note eq null", { note: { eq: null } }, (d) => d.note === null],
  ["note ne null", { note: { ne: null } }, (d) => d.note !== null],
  ["note isNull true", { note: { isNull: true } }, (d) => d.note === null],
  ["note isNull false", { note: { isNull: false } }, (d) => d.note !== null],
  ["note eq ''", { note: { eq: "" } }, (d) => d.note === ""],
  ["cpuTemp isNull true", { cpuTemp: { isNull: true } }, (d) => d.cpu_temp === null],
  [
    "lastConnectivityEvent eq null",
    { lastConnectivityEvent: { eq: null } },
    (d) => d.last_connectivity_event === null,
  ],
  [
    "lastConnectivityEvent isNull false",
    { lastConnectivityEvent: { isNull: false } },
    (d) => d.last_connectivity_event !== null,
  ],
  [
    "isRunningReleaseId isNull true",
    { isRunningReleaseId: { isNull: true } },
    (d) => d.is_running__release === null,
  ],
  [
    "shouldBeRunningReleaseId ne null",
    { shouldBeRunningReleaseId: { ne: null } },
    (d) => d.should_be_running__release !== null,
  ],
  ["deviceName eq null (never)", { deviceName: { eq: null } }, () => false],
];

const logicCases: DeviceCase[] = [
  [
    "two operators on one field AND",
    { cpuTemp: { gt: 40, le: 60 } },
    (d) => d.cpu_temp !== null && d.cpu_temp > 40 && d.cpu_temp <= 60,
  ],
  ["two fields AND", { isOnline: { eq: true }, note: { eq: "x" } }, (d) => d.is_online && d.note === "x"],
  [
    "AND list",
    { AND: [{ isOnline: { eq: true } }, { cpuTemp: { gt: 50 } }] },
    (d) => d.is_online && d.cpu_temp !== null && d.cpu_temp > 50,
  ],
  [
    "OR list",
    { OR: [{ isOnline: { eq: false } }, { note: { eq: "x" } }] },
    (d) => !d.is_online || d.note === "x",
  ],
  [
    "a OR (b AND c)",
    { OR: [{ isOnline: { eq: false } }, { isActive: { eq: false }, note: { eq: "x" } }] },
    (d) => !d.is_online || (!d.is_active && d.note === "x"),
  ],
  [
    "(a OR b) AND c",
    { OR: [{ isOnline: { eq: false } }, { isActive: { eq: false } }], note: { eq: "x" } },
    (d) => (!d.is_online || !d.is_active) && d.note === "x",
  ],
  ["NOT note eq x (nulls included)", { NOT: { note: { eq: "x" } } }, (d) => d.note !== "x"],
  ["NOT cpuTemp gt 50", { NOT: { cpuTemp: { gt: 50 } } }, (d) => !(d.cpu_temp !== null && d.cpu_temp > 50)],
  [
    "NOT (a OR b)",
    { NOT: { OR: [{ isOnline: { eq: true } }, { isActive: { eq: false } }] } },
    (d) => !(d.is_online || !d.is_active),
  ],
  [
    "OR of AND of NOT",
    {
      OR: [
        { AND: [{ isOnline: { eq: true } }, { NOT: { deviceName: { contains: "light" } } }] },
        { AND: [{ cpuTemp: { gt: 60 } }, { note: { eq: null } }] },
      ],
    },
    (d) =>
      (d.is_online && !d.device_name.includes("light")) ||
      (d.cpu_temp !== null && d.cpu_temp > 60 && d.note === null),
  ],
  ["AND []", { AND: [] }, () => true],
  ["OR []", { OR: [] }, () => false],
  ["empty where", {}, () => true],
  [
    "computed overallStatus eq offline",
    { overallStatus: { eq: "offline" } },
    (d) => overallStatus(d) === "offline",
  ],
  [
    "computed overallStatus in",
    { overallStatus: { in: ["idle", "updating"] } },
    (d) => ["idle", "updating"].includes(overallStatus(d)),
  ],
];

describe.each(databaseKinds)("GraphQL where and orderBy on %s", (kind) => {
  const w = new ReadWorld();
  beforeAll(() => w.start(kind), 180_000);
  afterAll(() => w.close());

  describe("where on devices", () => {
    const expectDevices = (_label: string, where: Row, predicate: (d: Device) => boolean) =>
      w.expectDevices(where, predicate);
    it.each(comparisonCases)("comparison: %s", expectDevices);
    it.each(booleanCases)("Boolean: %s", expectDevices);
    it.each(inCases)("in: %s", expectDevices);
    it.each(textCases)("text: %s", expectDevices);
    it.each(nullCases)("null: %s", expectDevices);
    it.each(logicCases)("logic: %s", expectDevices);

    it("the fixture makes every eq comparison case discriminating", () => {
      for (const [label, , predicate] of comparisonCases.filter(([l]) => / eq /.test(l))) {
        const count = w.fx.devices.filter(predicate).length;
        expect(count, label).toBeGreaterThan(0);
        expect(count, label).toBeLessThan(w.fx.devices.length);
      }
    });

    it("a DateTime with an offset is the same instant", async () => {
      await w.expectDevices(
        { lastConnectivityEvent: { eq: "2025-06-16T07:35:05.185+02:00" } },
        (d) => d.last_connectivity_event?.toISOString() === T_LCE,
      );
    });

    it("literals inline in the query text (not variables)", async () => {
      const data = await w.ok<{ devices: Row[] }>(
        `{ devices(where: {createdAt: {gt: "2025-01-01T00:00:00Z"}, deviceName: {in: ["light-01", "kiosk-03"]}}) { id } }`,
      );
      expect(data.devices).toEqual(
        idsOf(
          w.fx.devices
            .filter(
              (d) =>
                d.created_at > new Date("2025-01-01") && ["light-01", "kiosk-03"].includes(d.device_name),
            )
            .sort(byId),
        ),
      );
    });
  });

  describe("where through relations", () => {
    it("to-one: belongsToApplication.appName eq weather", async () => {
      await w.expectDevices(
        { belongsToApplication: { appName: { eq: "weather" } } },
        (d) => d.belongs_to__application === w.appNamed("weather").id,
      );
    });

    it("to-one, depth 2: belongsToApplication.organization.handle eq globex", async () => {
      const globex = w.fx.organizations.find((o) => o.handle === "globex");
      await w.expectDevices(
        { belongsToApplication: { organization: { handle: { eq: "globex" } } } },
        (d) => w.appById(d.belongs_to__application).organization === globex?.id,
      );
    });

    it("to-one through a nullable link, and its negation", async () => {
      const failed = (d: Device) => w.releaseOf(d.is_running__release)?.status === "failed";
      await w.expectDevices({ isRunningRelease: { status: { eq: "failed" } } }, failed);
      await w.expectDevices({ NOT: { isRunningRelease: { status: { eq: "failed" } } } }, (d) => !failed(d));
    });

    it("to-many some / every / none", async () => {
      const devicesOf = w.devicesOf;
      await w.expectApplications({ ownsDevice: { some: { isOnline: { eq: true } } } }, (a) =>
        devicesOf(a).some((d) => d.is_online),
      );
      await w.expectApplications({ ownsDevice: { every: { isOnline: { eq: false } } } }, (a) =>
        devicesOf(a).every((d) => !d.is_online),
      );
      await w.expectApplications({ ownsDevice: { none: { isOnline: { eq: true } } } }, (a) =>
        devicesOf(a).every((d) => !d.is_online),
      );
      // a null-valued condition does not hold for `every`
      await w.expectApplications({ ownsDevice: { every: { cpuTemp: { gt: 30 } } } }, (a) =>
        devicesOf(a).every((d) => d.cpu_temp !== null && d.cpu_temp > 30),
      );
      await w.expectApplications({ ownsRelease: { some: {} } }, (a) =>
        w.fx.releases.some((r) => r.belongs_to__application === a.id),
      );
    });

    it("every and none hold on an empty relation, some does not", async () => {
      const dependents = (a: Application) =>
        w.fx.applications.filter((b) => b.depends_on__application === a.id);
      expect(w.fx.applications.filter((a) => dependents(a).length === 0).length).toBeGreaterThan(0);
      await w.expectApplications({ isDependedOnByApplication: { every: { appName: { eq: "nope" } } } }, (a) =>
        dependents(a).every((b) => b.app_name === "nope"),
      );
      await w.expectApplications(
        { isDependedOnByApplication: { none: {} } },
        (a) => dependents(a).length === 0,
      );
      await w.expectApplications(
        { isDependedOnByApplication: { some: {} } },
        (a) => dependents(a).length > 0,
      );
    });

    it("some and none together, ANDed", async () => {
      await w.expectApplications(
        { ownsDevice: { some: { isOnline: { eq: true } }, none: { cpuTemp: { gt: 70 } } } },
        (a) =>
          w.devicesOf(a).some((d) => d.is_online) &&
          !w.devicesOf(a).some((d) => d.cpu_temp !== null && d.cpu_temp > 70),
      );
    });

    it("to-many inside to-many: ownsDevice.some.deviceTag.some", async () => {
      await w.expectApplications(
        {
          ownsDevice: {
            some: { deviceTag: { some: { tagKey: { eq: "alias" }, value: { startsWith: "kiosk" } } } },
          },
        },
        (a) =>
          w
            .devicesOf(a)
            .some((d) => w.tagsOf(d).some((t) => t.tag_key === "alias" && t.value.startsWith("kiosk"))),
      );
    });

    it("to-many inside to-one: belongsToApplication.ownsRelease.some", async () => {
      await w.expectDevices(
        { belongsToApplication: { ownsRelease: { some: { isInvalidated: { eq: true } } } } },
        (d) =>
          w.fx.releases.some(
            (r) => r.belongs_to__application === d.belongs_to__application && r.is_invalidated,
          ),
      );
    });

    it("to-one inside to-many: ownsDevice.some.isRunningRelease.status", async () => {
      await w.expectApplications(
        { ownsDevice: { some: { isRunningRelease: { status: { eq: "running" } } } } },
        (a) => w.devicesOf(a).some((d) => w.releaseOf(d.is_running__release)?.status === "running"),
      );
    });

    it("none inside every, on device tags", async () => {
      await w.expectApplications(
        { ownsDevice: { every: { deviceTag: { none: { tagKey: { eq: "location" } } } } } },
        (a) => w.devicesOf(a).every((d) => !w.tagsOf(d).some((t) => t.tag_key === "location")),
      );
    });

    it("relations combined with OR and NOT", async () => {
      await w.expectDevices(
        {
          OR: [
            { belongsToApplication: { appName: { eq: "sensors" } } },
            { NOT: { deviceTag: { some: {} } }, isOnline: { eq: false } },
          ],
        },
        (d) =>
          w.appById(d.belongs_to__application).app_name === "sensors" ||
          (w.tagsOf(d).length === 0 && !d.is_online),
      );
    });
  });

  describe("orderBy", () => {
    async function ids(query: string, variables?: Row): Promise<number[]> {
      const data = await w.ok<{ devices: { id: number }[] }>(query, variables);
      return data.devices.map((d) => d.id);
    }

    it("several items with mixed directions", async () => {
      const got = await ids("{ devices(orderBy: [{isOnline: DESC}, {deviceName: ASC}, {id: DESC}]) { id } }");
      const expected = [...w.fx.devices].sort(
        (a, b) =>
          Number(b.is_online) - Number(a.is_online) || text(a.device_name, b.device_name) || b.id - a.id,
      );
      expect(got).toEqual(expected.map((d) => d.id));
    });

    it("ties are broken by id ascending", async () => {
      const got = await ids("{ devices(orderBy: [{deviceName: ASC}]) { id } }");
      expect(got).toEqual(
        [...w.fx.devices].sort((a, b) => text(a.device_name, b.device_name) || a.id - b.id).map((d) => d.id),
      );
      const desc = await ids("{ devices(orderBy: {deviceName: DESC}) { id } }");
      expect(desc).toEqual(
        [...w.fx.devices].sort((a, b) => text(b.device_name, a.device_name) || a.id - b.id).map((d) => d.id),
      );
    });

    it("through a to-one relation, then a field DESC", async () => {
      const got = await ids(
        "{ devices(orderBy: [{belongsToApplication: {appName: ASC}}, {deviceName: DESC}]) { id } }",
      );
      const app = (d: Device) => w.appById(d.belongs_to__application).app_name;
      const expected = [...w.fx.devices].sort(
        (a, b) => text(app(a), app(b)) || text(b.device_name, a.device_name) || a.id - b.id,
      );
      expect(got).toEqual(expected.map((d) => d.id));
    });

    it("through two to-one relations: belongsToApplication.organization.handle DESC", async () => {
      const got = await ids(
        "{ devices(orderBy: [{belongsToApplication: {organization: {handle: DESC}}}]) { id } }",
      );
      const handle = (d: Device) =>
        w.fx.organizations.find((o) => o.id === w.appById(d.belongs_to__application).organization)?.handle ??
        "";
      expect(got).toEqual(
        [...w.fx.devices].sort((a, b) => text(handle(b), handle(a)) || a.id - b.id).map((d) => d.id),
      );
    });

    it("a DateTime DESC, a link id, and nulls first in descending order", async () => {
      const got = await ids(
        "{ devices(orderBy: [{belongsToApplicationId: DESC}, {createdAt: DESC}]) { id } }",
      );
      const expected = [...w.fx.devices].sort(
        (a, b) =>
          b.belongs_to__application - a.belongs_to__application ||
          b.created_at.getTime() - a.created_at.getTime() ||
          a.id - b.id,
      );
      expect(got).toEqual(expected.map((d) => d.id));
      // PostgreSQL puts nulls first in descending order
      const byUsage = await ids(
        "{ devices(orderBy: {cpuUsage: DESC}, where: {isOnline: {eq: true}}) { id } }",
      );
      const online = w.fx.devices.filter((d) => d.is_online);
      const usage = (d: Device) => (d.cpu_usage === null ? Number.POSITIVE_INFINITY : d.cpu_usage);
      expect(byUsage).toEqual(
        [...online].sort((a, b) => usage(b) - usage(a) || a.id - b.id).map((d) => d.id),
      );
    });

    it("the computed overallStatus, then id DESC", async () => {
      const got = await ids("{ devices(orderBy: [{overallStatus: ASC}, {id: DESC}]) { id } }");
      const expected = [...w.fx.devices].sort(
        (a, b) => text(overallStatus(a), overallStatus(b)) || b.id - a.id,
      );
      expect(got).toEqual(expected.map((d) => d.id));
    });

    it("orderBy, where, first and offset from variables", async () => {
      const got = await ids(
        "query($o: [DeviceOrderBy!], $w: DeviceWhere, $f: Int, $s: Int) { devices(orderBy: $o, where: $w, first: $f, offset: $s) { id } }",
        { o: [{ memoryUsage: "DESC" }], w: { isActive: { eq: true } }, f: 5, s: 2 },
      );
      const expected = w.fx.devices
        .filter((d) => d.is_active)
        .sort((a, b) => (b.memory_usage ?? 0) - (a.memory_usage ?? 0) || a.id - b.id)
        .slice(2, 7);
      expect(got).toEqual(expected.map((d) => d.id));
    });

    it("orderBy inside a relation, through its own to-one", async () => {
      const data = await w.ok<{ organizations: { handle: string; application: { id: number }[] }[] }>(
        "{ organizations { handle application(orderBy: {isForDeviceType: {slug: DESC}}) { id } } }",
      );
      const slug = (a: Application) =>
        w.fx.deviceTypes.find((t) => t.id === a.is_for__device_type)?.slug ?? "";
      expect(data.organizations).toEqual(
        [...w.fx.organizations].sort(byId).map((o) => ({
          handle: o.handle,
          application: idsOf(
            w.fx.applications
              .filter((a) => a.organization === o.id)
              .sort((a, b) => text(slug(b), slug(a)) || a.id - b.id),
          ),
        })),
      );
    });
  });
});
