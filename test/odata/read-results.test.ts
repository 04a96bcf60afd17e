import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Application, Device, DeviceTag, Release } from "../../src/generated/prisma/client.ts";
import { databaseKinds } from "../support/databases.ts";
import { cmp, ops, overallStatus } from "../support/oracle.ts";
import { releaseVersion } from "../support/pine-wire.ts";
import { buildFixture, type Fixture } from "../support/read-fixture.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Results of OData reads, checked against expectations computed independently in JavaScript from the
// rows the fixture inserted: filter, sort and map the arrays; never ask the compiler or SQL.

type Row = Record<string, unknown>;

// ---- the wire format, written out by hand ---------------------------------------------------------

/** Foreign keys shown as `{"__id": N}` (the link targets a resource; `actor` is internal: a plain integer). */
const linkFields: Record<string, readonly string[]> = {
  device: [
    "belongs_to__application",
    "belongs_to__user",
    "is_managed_by__device",
    "should_be_running__release",
    "is_of__device_type",
    "is_running__release",
    "should_be_operated_by__release",
    "should_be_managed_by__supervisor_release",
    "should_be_managed_by__release",
    "is_managed_by__service_instance",
  ],
  application: [
    "user",
    "depends_on__application",
    "organization",
    "application_type",
    "is_for__device_type",
    "should_be_running__release",
  ],
  release: ["belongs_to__application", "is_created_by__user"],
  device_tag: ["device"],
  device_environment_variable: ["device"],
  organization: [],
};
const hiddenFields: Record<string, readonly string[]> = {
  device: [
    "supervisor_api_address",
    "supervisor_api_port",
    "supervisor_api_key_ciphertext",
    "supervisor_api_key_retired",
    "last_heartbeat_at",
    "changed_api_heartbeat_state_on__date",
  ],
};

/** A row as the pinejs wire shows it by default: ISO timestamps, links as {__id}, hidden columns gone. */
function wire(resource: string, row: object): Row {
  const links = linkFields[resource] ?? [];
  const hidden = hiddenFields[resource] ?? [];
  const out: Row = {};
  for (const [key, value] of Object.entries(row)) {
    if (hidden.includes(key)) continue;
    if (links.includes(key)) out[key] = value === null ? null : { __id: value };
    else out[key] = value instanceof Date ? value.toISOString() : value;
  }
  return out;
}

/** The named fields of the wire row, in that order. */
function pick(resource: string, row: object, fields: readonly string[]): Row {
  const full = wire(resource, row);
  return Object.fromEntries(fields.map((field) => [field, full[field]]));
}

const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;
/** Code-point order, which is what the test databases' C collation sorts by. */
const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const idsOf = (rows: readonly { id: number }[]) => rows.map((row) => ({ id: row.id }));
const isoDate = (date: Date | null) => date?.toISOString().slice(0, 10) ?? null;

// ---- cases --------------------------------------------------------------------------------------

type DeviceCase = readonly [filter: string, predicate: (d: Device) => boolean];

const T_LCE = new Date("2025-06-16T05:35:05.185Z");
const T_CREATED = new Date("2023-04-18T03:45:15Z");
const comparisonCases: DeviceCase[] = ops.flatMap((op): DeviceCase[] => [
  [`id ${op} 20`, (d) => cmp(op, d.id, 20)],
  [`cpu_temp ${op} 50`, (d) => cmp(op, d.cpu_temp, 50)],
  [`50 ${op} cpu_temp`, (d) => cmp(op, 50, d.cpu_temp)],
  [`device_name ${op} 'light-05'`, (d) => cmp(op, d.device_name, "light-05")],
  [`is_online ${op} true`, (d) => cmp(op, d.is_online, true)],
  [`is_active ${op} false`, (d) => cmp(op, d.is_active, false)],
  [
    `last_connectivity_event ${op} datetime'2025-06-16T05:35:05.185Z'`,
    (d) => cmp(op, d.last_connectivity_event, T_LCE),
  ],
  [`created_at ${op} datetime'2023-04-18T03:45:15Z'`, (d) => cmp(op, d.created_at, T_CREATED)],
]);

const nullCases: DeviceCase[] = [
  ["note eq null", (d) => d.note === null],
  ["note ne null", (d) => d.note !== null],
  ["null eq note", (d) => d.note === null],
  ["note eq ''", (d) => d.note === ""],
  ["os_version eq null", (d) => d.os_version === null],
  ["os_version ne null", (d) => d.os_version !== null],
  ["download_progress eq null", (d) => d.download_progress === null],
  ["download_progress ne null", (d) => d.download_progress !== null],
  ["last_connectivity_event eq null", (d) => d.last_connectivity_event === null],
  ["last_connectivity_event ne null", (d) => d.last_connectivity_event !== null],
  ["is_running__release eq null", (d) => d.is_running__release === null],
  ["should_be_running__release ne null", (d) => d.should_be_running__release !== null],
  // a link field compares as the id it holds
  ["belongs_to__application eq 2", (d) => d.belongs_to__application === 2],
  [
    "is_running__release eq should_be_running__release",
    (d) => d.is_running__release === d.should_be_running__release,
  ],
  ["length(note) eq 0", (d) => d.note !== null && d.note.length === 0],
  // null semantics: a null note is not 'x', and "not (note is 'x')" holds for it too.
  ["note ne 'x'", (d) => d.note !== "x"],
  ["not (note eq 'x')", (d) => d.note !== "x"],
  ["not(note eq 'x')", (d) => d.note !== "x"],
  ["not (cpu_temp gt 50)", (d) => !(d.cpu_temp !== null && d.cpu_temp > 50)],
  ["cpu_temp le 50 or cpu_temp gt 50", (d) => d.cpu_temp !== null],
  ["note eq os_version", (d) => d.note === d.os_version],
  ["note ne os_version", (d) => d.note !== d.os_version],
];

const logicCases: DeviceCase[] = [
  // `or` binds looser than `and`: a or (b and c), which differs from (a or b) and c on this data.
  [
    "is_online eq false or is_active eq false and note eq 'x'",
    (d) => !d.is_online || (!d.is_active && d.note === "x"),
  ],
  [
    "is_active eq false and note eq 'x' or is_online eq false",
    (d) => (!d.is_active && d.note === "x") || !d.is_online,
  ],
  [
    "(is_online eq false or is_active eq false) and note eq 'x'",
    (d) => (!d.is_online || !d.is_active) && d.note === "x",
  ],
  [
    "is_online eq true and is_active eq true or cpu_temp gt 60 and note eq null",
    (d) => (d.is_online && d.is_active) || (d.cpu_temp !== null && d.cpu_temp > 60 && d.note === null),
  ],
  // pinejs-client 6 parenthesises every operand.
  ["(is_online eq true) and (id eq 5)", (d) => d.is_online && d.id === 5],
  ["(is_online eq true) and (cpu_temp gt 50)", (d) => d.is_online && d.cpu_temp !== null && d.cpu_temp > 50],
  [
    "(is_online eq false) or ((is_active eq false) and (note eq 'x'))",
    (d) => !d.is_online || (!d.is_active && d.note === "x"),
  ],
  ["is_online", (d) => d.is_online],
  ["not(is_online eq true)", (d) => !d.is_online],
  ["not is_online", (d) => !d.is_online],
  ["not is_online and is_active", (d) => !d.is_online && d.is_active],
  ["not contains(device_name,'light')", (d) => !d.device_name.includes("light")],
  ["not (is_online eq true or is_active eq false)", (d) => !(d.is_online || !d.is_active)],
  ["id in (1,2,3)", (d) => [1, 2, 3].includes(d.id)],
  ["id in (1, 2, 3)", (d) => [1, 2, 3].includes(d.id)],
  ["id in (5)", (d) => d.id === 5],
  [
    "device_name in ('light-01','Kitchen Light')",
    (d) => ["light-01", "Kitchen Light"].includes(d.device_name),
  ],
  ["note in ('x','')", (d) => d.note === "x" || d.note === ""],
  ["not (note in ('x'))", (d) => d.note !== "x"],
];

const arithmeticCases: DeviceCase[] = [
  ["id add 1 eq 5", (d) => d.id + 1 === 5],
  ["id sub 1 eq 5", (d) => d.id - 1 === 5],
  ["id mul 2 eq 10", (d) => d.id * 2 === 10],
  // Integer division of integers stays integral: 6/2 and 7/2 are both 3.
  ["id div 2 eq 3", (d) => Math.trunc(d.id / 2) === 3],
  ["id mod 2 eq 0", (d) => d.id % 2 === 0],
  ["id mod 7 eq 3", (d) => d.id % 7 === 3],
  // left-associative: (id sub 2) add 1, not id sub (2 add 1)
  ["id sub 2 add 1 eq 4", (d) => d.id - 2 + 1 === 4],
  ["id sub 10 sub 5 eq 5", (d) => d.id - 10 - 5 === 5],
  ["id div 2 mul 2 eq id", (d) => Math.trunc(d.id / 2) * 2 === d.id],
  // mul binds tighter than add
  ["id add 2 mul 3 eq 11", (d) => d.id + 2 * 3 === 11],
  [
    "cpu_temp add cpu_usage gt 100",
    (d) => d.cpu_temp !== null && d.cpu_usage !== null && d.cpu_temp + d.cpu_usage > 100,
  ],
  [
    "cpu_temp sub cpu_usage lt 0",
    (d) => d.cpu_temp !== null && d.cpu_usage !== null && d.cpu_temp - d.cpu_usage < 0,
  ],
  // a decimal divisor makes the division exact
  ["cpu_temp div 2.5 gt 25", (d) => d.cpu_temp !== null && d.cpu_temp / 2.5 > 25],
  ["cpu_temp div 2.5 eq 20", (d) => d.cpu_temp !== null && d.cpu_temp / 2.5 === 20],
  ["cpu_temp sub 100 lt -50", (d) => d.cpu_temp !== null && d.cpu_temp - 100 < -50],
  ["cpu_temp mul 0.5 eq 24.5", (d) => d.cpu_temp !== null && d.cpu_temp * 0.5 === 24.5],
];

const functionCases: DeviceCase[] = [
  ["contains(device_name,'light')", (d) => d.device_name.includes("light")],
  ["contains(device_name,'Light')", (d) => d.device_name.includes("Light")],
  // no LIKE wildcards leak through
  ["contains(device_name,'%25')", (d) => d.device_name.includes("%")],
  ["contains(device_name,'_')", (d) => d.device_name.includes("_")],
  ["startswith(device_name,'light')", (d) => d.device_name.startsWith("light")],
  ["startswith(device_name,'%25')", (d) => d.device_name.startsWith("%")],
  ["startswith(device_name,'light%25')", (d) => d.device_name.startsWith("light%")],
  ["contains(device_name,'t_')", (d) => d.device_name.includes("t_")],
  ["endswith(device_name,'-01')", (d) => d.device_name.endsWith("-01")],
  ["endswith(device_name,'%25')", (d) => d.device_name.endsWith("%")],
  ["substringof('eather',device_name)", (d) => d.device_name.includes("eather")],
  ["tolower(device_name) eq 'kitchen light'", (d) => d.device_name.toLowerCase() === "kitchen light"],
  ["toupper(device_name) eq 'KIOSK LOBBY'", (d) => d.device_name.toUpperCase() === "KIOSK LOBBY"],
  ["toupper(device_name) eq device_name", (d) => d.device_name.toUpperCase() === d.device_name],
  ["trim(device_name) eq 'padded'", (d) => d.device_name.trim() === "padded"],
  ["trim(device_name) ne device_name", (d) => d.device_name.trim() !== d.device_name],
  ["length(device_name) eq 12", (d) => d.device_name.length === 12],
  ["length(device_name) gt 10", (d) => d.device_name.length > 10],
  ["indexof(device_name,'-') eq 5", (d) => d.device_name.indexOf("-") === 5],
  ["indexof(device_name,'-') eq -1", (d) => d.device_name.indexOf("-") === -1],
  ["indexof(device_name,'é') eq 3", (d) => d.device_name.indexOf("é") === 3],
  ["concat(device_name,'!') eq 'light-01!'", (d) => `${d.device_name}!` === "light-01!"],
  [
    "concat(concat(device_name,'/'),status) eq 'kiosk-03/Idle'",
    (d) => d.status !== null && `${d.device_name}/${d.status}` === "kiosk-03/Idle",
  ],
  ["substring(device_name,1) eq 'iosk-03'", (d) => d.device_name.slice(1) === "iosk-03"],
  ["substring(device_name,0,5) eq 'light'", (d) => d.device_name.slice(0, 5) === "light"],
  ["substring(device_name,2,3) eq 'fé-'", (d) => d.device_name.slice(2, 5) === "fé-"],
  ["replace(device_name,'-','_') eq 'light_01'", (d) => d.device_name.replaceAll("-", "_") === "light_01"],
  ["replace(device_name,'e','') eq 'shard-nam'", (d) => d.device_name.replaceAll("e", "") === "shard-nam"],
  ["year(created_at) eq 2025", (d) => d.created_at.getUTCFullYear() === 2025],
  ["year(created_at) lt 2024", (d) => d.created_at.getUTCFullYear() < 2024],
  ["month(created_at) eq 6", (d) => d.created_at.getUTCMonth() + 1 === 6],
  ["day(last_connectivity_event) eq 4", (d) => d.last_connectivity_event?.getUTCDate() === 4],
  ["hour(last_connectivity_event) eq 5", (d) => d.last_connectivity_event?.getUTCHours() === 5],
  ["minute(last_connectivity_event) eq 35", (d) => d.last_connectivity_event?.getUTCMinutes() === 35],
  // seconds are whole: 01:07:13.037 has second 13
  ["second(last_connectivity_event) eq 13", (d) => d.last_connectivity_event?.getUTCSeconds() === 13],
  ["second(last_connectivity_event) eq 31", (d) => d.last_connectivity_event?.getUTCSeconds() === 31],
  ["created_at lt now()", (d) => d.created_at.getTime() < Date.now()],
  [
    "last_connectivity_event lt now()",
    (d) => d.last_connectivity_event !== null && d.last_connectivity_event.getTime() < Date.now(),
  ],
  [
    "date(last_connectivity_event) eq date'2025-06-16'",
    (d) => isoDate(d.last_connectivity_event) === "2025-06-16",
  ],
  [
    "date(last_connectivity_event) eq datetime'2025-06-04T00:00:00Z'",
    (d) => isoDate(d.last_connectivity_event) === "2025-06-04",
  ],
  ["date(created_at) lt date'2024-01-01'", (d) => (isoDate(d.created_at) as string) < "2024-01-01"],
  ["round(cpu_temp div 2.5) eq 20", (d) => d.cpu_temp !== null && Math.round(d.cpu_temp / 2.5) === 20],
  ["floor(cpu_temp div 2.5) eq 20", (d) => d.cpu_temp !== null && Math.floor(d.cpu_temp / 2.5) === 20],
  ["ceiling(cpu_temp div 2.5) eq 20", (d) => d.cpu_temp !== null && Math.ceil(d.cpu_temp / 2.5) === 20],
  ["round(cpu_temp) eq 50", (d) => d.cpu_temp === 50],
  // halves round away from zero: 24.5 → 25, 25.5 → 26
  ["round(cpu_temp mul 0.5) eq 25", (d) => d.cpu_temp !== null && Math.round(d.cpu_temp * 0.5) === 25],
  ["floor(cpu_temp mul 0.5) eq 25", (d) => d.cpu_temp !== null && Math.floor(d.cpu_temp * 0.5) === 25],
  ["ceiling(cpu_temp mul 0.5) eq 25", (d) => d.cpu_temp !== null && Math.ceil(d.cpu_temp * 0.5) === 25],
  ["floor(cpu_usage) ge 90", (d) => d.cpu_usage !== null && d.cpu_usage >= 90],
];

const literalCases: DeviceCase[] = [
  // percent-encoded inside the quotes, a doubled quote for a quote: as pinejs-client sends it
  ["device_name eq 'O''Brien%20%26%20co%2F100%25'", (d) => d.device_name === "O'Brien & co/100%"],
  ["device_name eq 'sensor_a%25b'", (d) => d.device_name === "sensor_a%b"],
  ["device_name eq 'caf%C3%A9-display'", (d) => d.device_name === "café-display"],
  ["device_name eq 'café-display'", (d) => d.device_name === "café-display"],
  ["device_name eq '%20%20padded%20%20'", (d) => d.device_name === "  padded  "],
  // a datetime literal with an offset is the same instant
  [
    "last_connectivity_event eq datetime'2025-06-16T07:35:05.185+02:00'",
    (d) => d.last_connectivity_event?.getTime() === T_LCE.getTime(),
  ],
  ["startswith(device_name,'O''')", (d) => d.device_name.startsWith("O'")],
];

// ---- the suite ----------------------------------------------------------------------------------

describe.each(databaseKinds)("OData read results on %s", (kind) => {
  let server: TestServer;
  let fx: Fixture;

  beforeAll(async () => {
    server = await startTestServer(kind);
    fx = await buildFixture(server.test.db);
  });
  afterAll(() => server.close());

  const appById = (id: number) => fx.applications.find((a) => a.id === id) as Application;
  const devicesOf = (app: Application) => fx.devices.filter((d) => d.belongs_to__application === app.id);
  const tagsOf = (d: Device) => fx.deviceTags.filter((t) => t.device === d.id);

  /** A successful GET: 200, JSON, one SQL statement; returns the parsed body. */
  async function ok(path: string): Promise<unknown> {
    const response = await server.app.inject({ method: "GET", url: `/v6${path}` });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^application\/json/);
    expect(response.headers["x-sql-statements"]).toBe("1");
    return JSON.parse(response.body);
  }

  /** A failed GET: the status, and the message as a JSON string body. */
  async function fails(path: string, status: number, message: RegExp): Promise<void> {
    const response = await server.app.inject({ method: "GET", url: `/v6${path}` });
    expect(response.statusCode, response.body).toBe(status);
    const body: unknown = JSON.parse(response.body);
    expect(typeof body, response.body).toBe("string");
    expect(body).toMatch(message);
  }

  async function expectDevices(filter: string, predicate: (d: Device) => boolean): Promise<void> {
    const body = await ok(`/device?$select=id&$filter=${filter}`);
    expect(body).toEqual({ d: idsOf(fx.devices.filter(predicate).sort(byId)) });
  }

  describe("$filter on device", () => {
    it.each(comparisonCases)("comparison %s", expectDevices);
    it.each(nullCases)("null: %s", expectDevices);
    it.each(logicCases)("logic: %s", expectDevices);
    it.each(arithmeticCases)("arithmetic: %s", expectDevices);
    it.each(functionCases)("function: %s", expectDevices);
    it.each(literalCases)("literal: %s", expectDevices);

    it("the fixture makes every comparison case discriminating", () => {
      // Guards against a fixture change that makes a case vacuous: each eq case selects some rows but not all.
      for (const [filter, predicate] of comparisonCases.filter(([f]) => / eq /.test(f))) {
        const count = fx.devices.filter(predicate).length;
        expect(count, filter).toBeGreaterThan(0);
        expect(count, filter).toBeLessThan(fx.devices.length);
      }
    });

    it("a or b and c means a or (b and c) on data where the readings differ", () => {
      const right = (d: Device) => !d.is_online || (!d.is_active && d.note === "x");
      const left = (d: Device) => (!d.is_online || !d.is_active) && d.note === "x";
      expect(fx.devices.filter(right)).not.toEqual(fx.devices.filter(left));
    });

    it.each([["id div 0 eq 1"], ["id mod 0 eq 1"], ["cpu_temp div (id sub id) eq 1"]])(
      "division by zero %s is a 400",
      async (filter) => {
        await fails(`/device?$filter=${filter}`, 400, /division by zero/i);
      },
    );

    // Integers divide as integers (OData's div on Edm.Int32); a literal written with a decimal point,
    // even a whole one such as 2.0, makes the division exact.
    it("id div 2 eq 3 divides as integers: ids 6 and 7", async () => {
      await expectDevices("id div 2 eq 3", (d) => Math.trunc(d.id / 2) === 3);
    });

    it("id div 2.0 eq 3 divides exactly: id 6 only", async () => {
      await expectDevices("id div 2.0 eq 3", (d) => d.id / 2 === 3);
    });

    it("a quoted literal on device_tag: value eq 'O''Brien''s'", async () => {
      const body = await ok(`/device_tag?$select=id,value&$filter=value eq 'O''Brien''s'`);
      expect(body).toEqual({
        d: fx.deviceTags.filter((t) => t.value === "O'Brien's").map((t) => ({ id: t.id, value: t.value })),
      });
    });
  });

  describe("paths in $filter", () => {
    const appNamed = (name: string) => fx.applications.find((a) => a.app_name === name) as Application;

    it("to-one: belongs_to__application/app_name eq 'weather'", async () => {
      await expectDevices(
        "belongs_to__application/app_name eq 'weather'",
        (d) => d.belongs_to__application === appNamed("weather").id,
      );
    });

    it("to-one, depth 2: belongs_to__application/organization/handle eq 'globex'", async () => {
      const globex = fx.organizations.find((o) => o.handle === "globex");
      await expectDevices(
        "belongs_to__application/organization/handle eq 'globex'",
        (d) => appById(d.belongs_to__application).organization === globex?.id,
      );
    });

    it("to-one through a nullable link: is_running__release/status eq 'failed'", async () => {
      const failed = (d: Device) =>
        fx.releases.find((r) => r.id === d.is_running__release)?.status === "failed";
      await expectDevices("is_running__release/status eq 'failed'", failed);
      await expectDevices("not (is_running__release/status eq 'failed')", (d) => !failed(d));
      await expectDevices("is_running__release/status ne 'failed'", (d) => !failed(d));
    });

    it("to-one compared with a column of the row: is_running__release/id eq should_be_running__release", async () => {
      await expectDevices(
        "is_running__release/id eq should_be_running__release",
        (d) => d.is_running__release === d.should_be_running__release,
      );
    });

    async function expectApplications(filter: string, predicate: (a: Application) => boolean) {
      const body = await ok(`/application?$select=id&$filter=${filter}`);
      expect(body).toEqual({ d: idsOf(fx.applications.filter(predicate).sort(byId)) });
    }

    it("to-many any(): owns__device/any(d:d/is_online eq true)", async () => {
      await expectApplications("owns__device/any(d:d/is_online eq true)", (a) =>
        devicesOf(a).some((d) => d.is_online),
      );
    });

    it("to-many all(): owns__device/all(d:d/is_online eq false)", async () => {
      await expectApplications("owns__device/all(d:d/is_online eq false)", (a) =>
        devicesOf(a).every((d) => !d.is_online),
      );
    });

    it("all() with a null-valued body counts as false: owns__device/all(d:d/cpu_temp gt 30)", async () => {
      await expectApplications("owns__device/all(d:d/cpu_temp gt 30)", (a) =>
        devicesOf(a).every((d) => d.cpu_temp !== null && d.cpu_temp > 30),
      );
    });

    it("nested any() with two variables, referring to the outer one", async () => {
      await expectApplications(
        "owns__device/any(d:d/device_tag/any(t:t/tag_key eq 'alias' and t/value eq d/device_name))",
        (a) =>
          devicesOf(a).some((d) => tagsOf(d).some((t) => t.tag_key === "alias" && t.value === d.device_name)),
      );
    });

    it("a bare name inside a lambda is the filtered row's: owns__device/all(d:d/is_of__device_type eq is_for__device_type)", async () => {
      await expectApplications("owns__device/all(d:d/is_of__device_type eq is_for__device_type)", (a) =>
        devicesOf(a).every((d) => d.is_of__device_type === a.is_for__device_type),
      );
    });

    it("any() on device: device_tag/any(t:t/tag_key eq 'location')", async () => {
      await expectDevices("device_tag/any(t:t/tag_key eq 'location')", (d) =>
        tagsOf(d).some((t) => t.tag_key === "location"),
      );
    });

    it("$count in a filter: owns__device/$count gt 10", async () => {
      await expectApplications("owns__device/$count gt 10", (a) => devicesOf(a).length > 10);
    });

    it("$count with its own filter: owns__device/$count($filter=is_online eq true) eq 0", async () => {
      await expectApplications(
        "owns__device/$count($filter=is_online eq true) eq 0",
        (a) => devicesOf(a).filter((d) => d.is_online).length === 0,
      );
    });

    it("$count of a device's tags: device_tag/$count ge 2", async () => {
      await expectDevices("device_tag/$count ge 2", (d) => tagsOf(d).length >= 2);
    });
  });

  describe("$select and computed fields", () => {
    it("a key read gives every default field: timestamps, links as {__id}, no hidden or computed field", async () => {
      const device = fx.devices[11] as Device;
      expect(device.is_managed_by__device).not.toBeNull();
      expect(await ok(`/device(${device.id})`)).toEqual({ d: [wire("device", device)] });
    });

    it("the whole device collection in default order", async () => {
      expect(await ok("/device")).toEqual({ d: [...fx.devices].sort(byId).map((d) => wire("device", d)) });
    });

    it("the whole release collection, with its computed version fields", async () => {
      expect(await ok("/release")).toEqual({
        d: [...fx.releases].sort(byId).map((r) => ({ ...wire("release", r), ...releaseVersion(r) })),
      });
    });

    it("the whole application collection, with its computed commit and device_type", async () => {
      // commit: the commit of the fleet's target release; device_type: the slug of its device type.
      expect(await ok("/application")).toEqual({
        d: [...fx.applications].sort(byId).map((a) => ({
          ...wire("application", a),
          commit: fx.releases.find((r) => r.id === a.should_be_running__release)?.commit ?? null,
          device_type: fx.deviceTypes.find((t) => t.id === a.is_for__device_type)?.slug,
        })),
      });
    });

    it("$select with link fields: {__id} when set, null when not", async () => {
      const fields = ["id", "device_name", "belongs_to__application", "should_be_running__release", "note"];
      const body = await ok(`/device?$select=${fields.join(",")}`);
      const expected = [...fx.devices].sort(byId).map((d) => pick("device", d, fields));
      expect(body).toEqual({ d: expected });
      // both shapes occur
      expect(expected.some((d) => d.should_be_running__release === null)).toBe(true);
      expect(expected.some((d) => d.should_be_running__release !== null)).toBe(true);
    });

    it("an unpinned device has should_be_running__release: null", async () => {
      const unpinned = fx.devices.find((d) => d.should_be_running__release === null) as Device;
      const body = (await ok(`/device(${unpinned.id})?$select=should_be_running__release`)) as { d: Row[] };
      expect(body).toEqual({ d: [{ should_be_running__release: null }] });
    });

    it("$select=* is every default field", async () => {
      const device = fx.devices[3] as Device;
      expect(await ok(`/device(${device.id})?$select=*`)).toEqual({ d: [wire("device", device)] });
    });

    it("$select keeps the order of the named fields", async () => {
      const device = fx.devices[3] as Device;
      const response = await server.app.inject({
        method: "GET",
        url: `/v6/device(${device.id})?$select=uuid,id,device_name`,
      });
      expect(Object.keys((JSON.parse(response.body) as { d: Row[] }).d[0] as Row)).toEqual([
        "uuid",
        "id",
        "device_name",
      ]);
    });

    it("overall_status appears only when selected", async () => {
      const body = (await ok("/device")) as { d: Row[] };
      expect(body.d.every((row) => !("overall_status" in row))).toBe(true);
      expect(await ok("/device?$select=id,overall_status")).toEqual({
        d: [...fx.devices].sort(byId).map((d) => ({ id: d.id, overall_status: overallStatus(d) })),
      });
    });

    it.each(["inactive", "configuring", "offline", "updating", "idle"])(
      "$filter=overall_status eq '%s'",
      async (status) => {
        expect(fx.devices.some((d) => overallStatus(d) === status)).toBe(true);
        await expectDevices(`overall_status eq '${status}'`, (d) => overallStatus(d) === status);
      },
    );

    it("$filter on overall_status without selecting it does not output it", async () => {
      const body = (await ok("/device?$filter=overall_status eq 'offline'")) as { d: Row[] };
      expect(body.d.length).toBe(fx.devices.filter((d) => overallStatus(d) === "offline").length);
      expect(body.d.every((row) => !("overall_status" in row))).toBe(true);
    });
  });

  describe("$expand", () => {
    it("a to-one expansion is an array of one row, and replaces the {__id}", async () => {
      const body = await ok(
        "/device?$select=id,belongs_to__application&$expand=belongs_to__application($select=id,app_name)",
      );
      expect(body).toEqual({
        d: [...fx.devices].sort(byId).map((d) => {
          const app = appById(d.belongs_to__application);
          return { id: d.id, belongs_to__application: [{ id: app.id, app_name: app.app_name }] };
        }),
      });
    });

    it("a to-one expansion of a null link is an empty array", async () => {
      const body = await ok("/device?$select=id&$expand=should_be_running__release($select=id,semver)");
      expect(body).toEqual({
        d: [...fx.devices].sort(byId).map((d) => {
          const release = fx.releases.find((r) => r.id === d.should_be_running__release);
          return {
            id: d.id,
            should_be_running__release: release ? [{ id: release.id, semver: release.semver }] : [],
          };
        }),
      });
    });

    it("an expansion without options gives every default field of the rows", async () => {
      const device = fx.devices[0] as Device;
      const body = await ok(`/device(${device.id})?$expand=device_tag`);
      expect(body).toEqual({
        d: [
          {
            ...wire("device", device),
            device_tag: tagsOf(device)
              .sort(byId)
              .map((t) => wire("device_tag", t)),
          },
        ],
      });
    });

    it("depth 3 with nested $select;$filter;$orderby;$top;$skip;$expand", async () => {
      const url =
        "/application?$select=id,app_name&$orderby=app_name desc&$expand=owns__device(" +
        "$select=id,device_name;$filter=is_online eq true;$orderby=device_name desc;$top=4;$skip=1;" +
        "$expand=device_tag($select=tag_key,value;$orderby=tag_key desc;" +
        "$expand=device($select=id,uuid;$expand=belongs_to__application($select=slug))))";
      const expected = [...fx.applications]
        .sort((a, b) => text(b.app_name, a.app_name) || a.id - b.id)
        .map((a) => ({
          id: a.id,
          app_name: a.app_name,
          owns__device: devicesOf(a)
            .filter((d) => d.is_online)
            .sort((x, y) => text(y.device_name, x.device_name) || x.id - y.id)
            .slice(1, 5)
            .map((d) => ({
              id: d.id,
              device_name: d.device_name,
              device_tag: tagsOf(d)
                .sort((x, y) => text(y.tag_key, x.tag_key) || x.id - y.id)
                .map((t) => ({
                  tag_key: t.tag_key,
                  value: t.value,
                  device: [{ id: d.id, uuid: d.uuid, belongs_to__application: [{ slug: a.slug }] }],
                })),
            })),
        }));
      // the page holds some tagged devices, or the deepest levels would go unchecked
      expect(expected.flatMap((a) => a.owns__device.flatMap((d) => d.device_tag)).length).toBeGreaterThan(0);
      expect(await ok(url)).toEqual({ d: expected });
    });

    it("options inside the parentheses may be separated by & as well", async () => {
      const url =
        "/application?$select=id&$expand=owns__device($select=id,device_name&$filter=is_active eq true&$orderby=id desc&$top=2&$skip=1)";
      expect(await ok(url)).toEqual({
        d: [...fx.applications].sort(byId).map((a) => ({
          id: a.id,
          owns__device: devicesOf(a)
            .filter((d) => d.is_active)
            .sort((x, y) => y.id - x.id)
            .slice(1, 3)
            .map((d) => ({ id: d.id, device_name: d.device_name })),
        })),
      });
    });

    it("nav/$count in $expand gives a number", async () => {
      expect(await ok("/application?$select=id&$expand=owns__device/$count")).toEqual({
        d: [...fx.applications].sort(byId).map((a) => ({ id: a.id, owns__device: devicesOf(a).length })),
      });
    });

    it("nav/$count($filter=…) in $expand gives a number", async () => {
      expect(
        await ok(
          "/application?$select=id&$expand=owns__device/$count($filter=is_online eq true),owns__release/$count",
        ),
      ).toEqual({
        d: [...fx.applications].sort(byId).map((a) => ({
          id: a.id,
          owns__device: devicesOf(a).filter((d) => d.is_online).length,
          owns__release: fx.releases.filter((r) => r.belongs_to__application === a.id).length,
        })),
      });
    });

    it("$count=true inside an expansion gives <nav>@odata.count, ignoring $top", async () => {
      const body = await ok(
        "/application?$select=id&$expand=owns__device($count=true;$top=2;$select=id;$filter=is_online eq true)",
      );
      expect(body).toEqual({
        d: [...fx.applications].sort(byId).map((a) => {
          const online = devicesOf(a)
            .filter((d) => d.is_online)
            .sort(byId);
          return {
            id: a.id,
            owns__device: idsOf(online.slice(0, 2)),
            "owns__device@odata.count": online.length,
          };
        }),
      });
    });

    it("self-referencing navigations: depends_on__application and is_depended_on_by__application", async () => {
      const body = await ok(
        "/application?$select=id&$expand=depends_on__application($select=app_name),is_depended_on_by__application($select=app_name;$expand=owns__device/$count)",
      );
      expect(body).toEqual({
        d: [...fx.applications].sort(byId).map((a) => ({
          id: a.id,
          depends_on__application: fx.applications
            .filter((b) => b.id === a.depends_on__application)
            .map((b) => ({ app_name: b.app_name })),
          is_depended_on_by__application: fx.applications
            .filter((b) => b.depends_on__application === a.id)
            .sort(byId)
            .map((b) => ({ app_name: b.app_name, owns__device: devicesOf(b).length })),
        })),
      });
    });

    it("a device's gateway and managed devices, filtered through the same table", async () => {
      const body = await ok(
        "/device?$select=id&$filter=manages__device/any(m:m/is_managed_by__device/id eq id)&$expand=manages__device($select=id;$expand=is_managed_by__device($select=id)),device_tag/$count",
      );
      const managed = (d: Device) => fx.devices.filter((m) => m.is_managed_by__device === d.id).sort(byId);
      expect(body).toEqual({
        d: fx.devices
          .filter((d) => managed(d).length > 0)
          .sort(byId)
          .map((d) => ({
            id: d.id,
            manages__device: managed(d).map((m) => ({ id: m.id, is_managed_by__device: [{ id: d.id }] })),
            device_tag: tagsOf(d).length,
          })),
      });
    });

    it("two expansions side by side, one to-many and one to-one", async () => {
      const body = await ok(
        "/release?$select=id&$filter=status eq 'failed'&$expand=belongs_to__application($select=app_name),is_running_on__device($select=id)",
      );
      expect(body).toEqual({
        d: fx.releases
          .filter((r: Release) => r.status === "failed")
          .sort(byId)
          .map((r) => ({
            id: r.id,
            belongs_to__application: [{ app_name: appById(r.belongs_to__application).app_name }],
            is_running_on__device: idsOf(fx.devices.filter((d) => d.is_running__release === r.id).sort(byId)),
          })),
      });
    });
  });

  describe("$orderby, $top, $skip", () => {
    it("several keys with mixed directions", async () => {
      const body = await ok("/device?$select=id&$orderby=is_online desc,device_name asc,id desc");
      const expected = [...fx.devices].sort(
        (a, b) =>
          Number(b.is_online) - Number(a.is_online) || text(a.device_name, b.device_name) || b.id - a.id,
      );
      expect(body).toEqual({ d: idsOf(expected) });
    });

    it("no direction means ascending, and ties fall back to id ascending", async () => {
      const body = await ok("/device?$select=id&$orderby=device_name");
      const expected = [...fx.devices].sort((a, b) => text(a.device_name, b.device_name) || a.id - b.id);
      expect(body).toEqual({ d: idsOf(expected) });
    });

    it("a path key: belongs_to__application/app_name, then device_name desc", async () => {
      const body = await ok("/device?$select=id&$orderby=belongs_to__application/app_name,device_name desc");
      const expected = [...fx.devices].sort(
        (a, b) =>
          text(appById(a.belongs_to__application).app_name, appById(b.belongs_to__application).app_name) ||
          text(b.device_name, a.device_name) ||
          a.id - b.id,
      );
      expect(body).toEqual({ d: idsOf(expected) });
    });

    it("owns__device/$count desc", async () => {
      const body = await ok("/application?$select=id&$orderby=owns__device/$count desc");
      const expected = [...fx.applications].sort(
        (a, b) => devicesOf(b).length - devicesOf(a).length || a.id - b.id,
      );
      expect(body).toEqual({ d: idsOf(expected) });
    });

    it("a datetime key with ties: created_at desc", async () => {
      const body = await ok("/release?$select=id&$orderby=created_at desc");
      const expected = [...fx.releases].sort(
        (a, b) => b.created_at.getTime() - a.created_at.getTime() || a.id - b.id,
      );
      expect(body).toEqual({ d: idsOf(expected) });
    });

    it("a $count key with its own filter: owns__device/$count($filter=is_online eq true) desc", async () => {
      const body = await ok(
        "/application?$select=id&$orderby=owns__device/$count($filter=is_online eq true) desc",
      );
      const online = (a: Application) => devicesOf(a).filter((d) => d.is_online).length;
      expect(body).toEqual({
        d: idsOf([...fx.applications].sort((a, b) => online(b) - online(a) || a.id - b.id)),
      });
    });

    it("a computed key: overall_status, then id desc", async () => {
      const body = await ok("/device?$select=id,overall_status&$orderby=overall_status,id desc");
      const expected = [...fx.devices]
        .sort((a, b) => text(overallStatus(a), overallStatus(b)) || b.id - a.id)
        .map((d) => ({ id: d.id, overall_status: overallStatus(d) }));
      expect(body).toEqual({ d: expected });
    });

    it("an $orderby inside an expansion on a to-one path", async () => {
      const body = await ok(
        "/organization?$select=handle&$expand=application($select=id;$orderby=is_for__device_type/slug desc)",
      );
      const slug = (a: Application) => fx.deviceTypes.find((t) => t.id === a.is_for__device_type)?.slug ?? "";
      expect(body).toEqual({
        d: [...fx.organizations].sort(byId).map((o) => ({
          handle: o.handle,
          application: idsOf(
            fx.applications
              .filter((a) => a.organization === o.id)
              .sort((a, b) => text(slug(b), slug(a)) || a.id - b.id),
          ),
        })),
      });
    });

    it("the default order is by id ascending (also for rows updated after insertion)", async () => {
      expect(await ok("/device?$select=id")).toEqual({ d: idsOf([...fx.devices].sort(byId)) });
      expect(await ok("/release?$select=id")).toEqual({ d: idsOf([...fx.releases].sort(byId)) });
    });

    it.each([
      ["$top=5", 0, 5],
      ["$skip=35", 35, undefined],
      ["$top=3&$skip=10", 10, 13],
      ["$top=0", 0, 0],
      ["$skip=1000", 1000, undefined],
    ] as const)("%s in default order", async (paging, from, to) => {
      const body = await ok(`/device?$select=id&${paging}`);
      expect(body).toEqual({ d: idsOf([...fx.devices].sort(byId).slice(from, to)) });
    });

    it("$top and $skip after $filter and $orderby", async () => {
      const body = await ok(
        "/device?$select=id&$filter=is_online eq true&$orderby=cpu_usage desc&$top=5&$skip=2",
      );
      // cpu_usage is nullable: PostgreSQL puts nulls first in descending order
      const online = fx.devices.filter((d) => d.is_online);
      const expected = [...online].sort((a, b) => {
        if (a.cpu_usage === b.cpu_usage) return a.id - b.id;
        if (a.cpu_usage === null) return -1;
        if (b.cpu_usage === null) return 1;
        return b.cpu_usage - a.cpu_usage;
      });
      expect(body).toEqual({ d: idsOf(expected.slice(2, 7)) });
    });
  });

  describe("counts", () => {
    it("/device/$count", async () => {
      expect(await ok("/device/$count")).toEqual({ d: fx.devices.length });
    });

    it("/device/$count?$filter=…", async () => {
      expect(await ok("/device/$count?$filter=is_online eq true and note ne null")).toEqual({
        d: fx.devices.filter((d) => d.is_online && d.note !== null).length,
      });
    });

    it("/application/$count?$filter with a path", async () => {
      expect(await ok("/application/$count?$filter=organization/handle eq 'acme'")).toEqual({
        d: fx.applications.filter(
          (a) => fx.organizations.find((o) => o.id === a.organization)?.handle === "acme",
        ).length,
      });
    });

    it("$count=true gives @odata.count (ignoring $top and $skip) alongside d", async () => {
      const online = fx.devices.filter((d) => d.is_online).sort(byId);
      expect(await ok("/device?$select=id&$filter=is_online eq true&$count=true&$top=3&$skip=1")).toEqual({
        d: idsOf(online.slice(1, 4)),
        "@odata.count": online.length,
      });
    });
  });

  describe("keys", () => {
    const device = () => fx.devices[4] as Device;

    it("device(N)", async () => {
      expect(await ok(`/device(${device().id})?$select=id,uuid`)).toEqual({
        d: [{ id: device().id, uuid: device().uuid }],
      });
    });

    it("device(@id)?@id=N", async () => {
      expect(await ok(`/device(@id)?@id=${device().id}&$select=id,uuid`)).toEqual({
        d: [{ id: device().id, uuid: device().uuid }],
      });
    });

    it("device(uuid='…') and device(uuid=%27…%27)", async () => {
      const expected = { d: [{ id: device().id, uuid: device().uuid }] };
      expect(await ok(`/device(uuid='${device().uuid}')?$select=id,uuid`)).toEqual(expected);
      expect(await ok(`/device(uuid=%27${device().uuid}%27)?$select=id,uuid`)).toEqual(expected);
    });

    it("a composite key: device_tag(device=N,tag_key='k')", async () => {
      const tag = fx.deviceTags.find((t) => t.tag_key === "k") as DeviceTag;
      expect(await ok(`/device_tag(device=${tag.device},tag_key='k')`)).toEqual({
        d: [wire("device_tag", tag)],
      });
      expect(await ok(`/device_tag(tag_key='k',device=${tag.device})?$select=id`)).toEqual({
        d: [{ id: tag.id }],
      });
    });

    it("application(slug='org%2Fname')", async () => {
      const app = fx.applications[1] as Application;
      expect(app.slug).toContain("/");
      expect(await ok(`/application(slug='${app.slug.replace("/", "%2F")}')?$select=id,slug`)).toEqual({
        d: [{ id: app.id, slug: app.slug }],
      });
    });

    it("a key combines with $filter and $expand", async () => {
      const d = fx.devices[0] as Device;
      expect(
        await ok(`/device(${d.id})?$select=id&$filter=is_online eq ${d.is_online}&$expand=device_tag/$count`),
      ).toEqual({ d: [{ id: d.id, device_tag: tagsOf(d).length }] });
      expect(await ok(`/device(${d.id})?$select=id&$filter=is_online eq ${!d.is_online}`)).toEqual({ d: [] });
    });

    it.each(["/device(999999)", "/device(uuid='nope')", "/device_tag(device=1,tag_key='missing')"])(
      "a miss is {d: []} with 200: %s",
      async (path) => {
        expect(await ok(path)).toEqual({ d: [] });
      },
    );

    it("a non-key field set is a 400: device(device_name='x')", async () => {
      await fails("/device(device_name='x')", 400, /device_name/);
    });
  });

  describe("errors", () => {
    it("an unknown resource is a 404", async () => {
      await fails("/nothing", 404, /nothing/);
      await fails("/nothing?$filter=id eq 1", 404, /nothing/);
    });

    it.each([
      ["/device?$filter=nope eq 1", /nope/],
      ["/device?$select=id,nope", /nope/],
      ["/device?$orderby=nope", /nope/],
      ["/device?$expand=nope", /nope/],
      ["/device?$expand=device_tag($select=nope)", /nope/],
      ["/device?$filter=belongs_to__application/nope eq 1", /nope/],
      ["/device?$filter=nope/app_name eq 'x'", /nope/],
      ["/application?$filter=nope/any(d:d/id eq 1)", /nope/],
      ["/application?$filter=owns__device/any(d:d/nope eq 1)", /nope/],
      ["/application?$filter=owns__device/$count($filter=nope eq 1) gt 0", /nope/],
      ["/device?$filter=foo(device_name) eq 1", /foo/],
      ["/device?$filter=nope(device_name,'x')", /nope/],
      ["/device?$filter=fractionalseconds(created_at) eq 0", /fractionalseconds/],
      ["/device?$foo=1", /\$foo/],
      ["/device?$expand=device_tag($foo=1)", /\$foo/],
      ["/device?$filter=id eq 'x'", /id/],
      ["/device?$filter=device_name gt 5", /device_name/],
      ["/device?$filter=is_online eq 1", /is_online/],
      ["/device?$filter=created_at gt 'yesterday'", /created_at/],
      ["/device?$filter=contains(id,'1')", /contains/],
      ["/device?$filter=device_name", /boolean/],
      ["/device?$filter=id in ('a','b')", /id/],
      ["/device?$top=-1", /\$top/],
      ["/device?$skip=-1", /\$skip/],
      ["/device?$top=x", /\$top/],
    ] as const)("%s is a 400 naming the problem", async (path, message) => {
      await fails(path, 400, message);
    });
  });
});
