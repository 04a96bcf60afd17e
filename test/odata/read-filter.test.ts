import { describe, expect, it } from "vitest";
import type { Device } from "../../src/generated/prisma/client.ts";
import { databaseKinds } from "../support/databases.ts";
import { isoDate, useODataReads } from "../support/odata/odata-reads.ts";
import { cmp, ops } from "../support/oracle/oracle.ts";

// OData reads, $filter on device: comparison, null semantics, logic, arithmetic, functions and
// literals, each case a filter and the predicate it means. Every expectation is computed in JavaScript
// from the rows of test/support/core/read-fixture.ts (filter, sort and map the arrays), never by asking the
// compiler.

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

describe.each(databaseKinds)("OData read results on %s", (kind) => {
  const reads = useODataReads(kind);
  const { ok, fails, expectDevices } = reads;

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
        const count = reads.fx.devices.filter(predicate).length;
        expect(count, filter).toBeGreaterThan(0);
        expect(count, filter).toBeLessThan(reads.fx.devices.length);
      }
    });

    it("a or b and c means a or (b and c) on data where the readings differ", () => {
      const right = (d: Device) => !d.is_online || (!d.is_active && d.note === "x");
      const left = (d: Device) => (!d.is_online || !d.is_active) && d.note === "x";
      expect(reads.fx.devices.filter(right)).not.toEqual(reads.fx.devices.filter(left));
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
        d: reads.fx.deviceTags
          .filter((t) => t.value === "O'Brien's")
          .map((t) => ({ id: t.id, value: t.value })),
      });
    });
  });
});
