import { createHash } from "node:crypto";
import type { Database } from "../../../src/db/database.ts";
import type { TableName } from "./filter-schema.ts";
import { overallStatus } from "./oracle.ts";
import type { Row } from "./oracle-eval.ts";

// The data of the generated filter tests: organization A (the tenant's: two non-public fleets whose
// devices hold nulls and odd strings) and, when `hidden`, organization B, whose fleet is invisible
// to A's users and whose devices hold the values that make expressions fail: zero, the integer
// limits, empty and huge strings. Every id is explicit and B's rows interleave with A's (even ids
// against odd), so a world with B differs from one without it only in B's rows.

export const TENANT = { userId: 1, actor: 1 } as const;

const INT_MAX = 2147483647;
const INT_MIN = -2147483648;
const at = (iso: string) => new Date(iso);
const uuid = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 32);
const pick = <T>(pool: readonly T[], i: number): T => pool[i % pool.length] as T;

const aInts = [null, 1, 7, 42, 100, 256, 999, 1024, 35, 70, 12345, 3];
const bInts = [0, 1, -1, INT_MAX, INT_MIN, null, 987654, INT_MAX - 1, INT_MIN + 1, 0, 100, 42];
/** Never zero, in either organization: the test of issue 16 may divide by it. */
const memoryTotals = [2048, 1, -1, INT_MAX, INT_MIN, null, 3, 7];

const aNames = [
  "Kitchen Light",
  "  padded  ",
  "\tTabbed\t",
  "\u00a0nbsp\u00a0",
  "O'Brien & co/100%",
  "sensor_a%b",
  "café",
  "cafe\u0301",
  "😀 emoji",
  "a😀b😀c",
  "x",
  "UPPER",
  "lower",
  "Mixed Case",
  "\u2003em space\u2003",
  "\u3000ideographic\u3000",
  "\ufeffbom",
  "line\nbreak",
  "crlf\r\n",
  "\u200bzero width",
  "\u0085nel",
  "shared",
  "shared",
  "''",
  "%",
  "_",
  "\\",
  `long ${"y".repeat(200)}`,
  "a b  c",
  "Ünïcødé",
  "\u180emvs",
  "multi\u2028line",
  "tab\tinside",
  "ẞ ß İ ı",
  " ",
  "\u2000\u200a",
];
const aNotes = [null, " ", "x", "it's", "\u00a0", "😀", "note %_", "nbsp\u00a0end", "  x  ", "Kitchen"];
const bTexts = [
  "",
  " ",
  "\t",
  "\u00a0",
  "secret-prefix-XYZ",
  "x".repeat(1000),
  "😀".repeat(50),
  "'",
  "%",
  "_",
  "e\u0301",
  "\u3000",
];
const aAscii = [
  null,
  "Idle",
  "Downloading",
  "Installing",
  "idle",
  " Idle ",
  "it's",
  "a_b%c",
  "MiXeD",
  "balenaOS 2.113.18",
  "\tIdle",
];
const bAscii = ["", null, "Idle", "x".repeat(300), " ", "%", "Downloading"];

const aTimes = [
  null,
  at("2025-01-01T00:00:00Z"),
  at("2024-02-29T23:59:59.999Z"),
  at("2025-06-15T13:45:30.123Z"),
  at("1970-01-01T00:00:00Z"),
  at("1969-12-31T23:59:59.999Z"),
  at("2000-03-01T00:00:00.500Z"),
  at("2099-12-31T23:59:59Z"),
];
const bTimes = [null, at("1900-01-01T00:00:00Z"), at("2999-12-31T23:59:59.999Z"), at("1970-01-01T00:00:00Z")];

function device(id: number, i: number, hidden: boolean, aIds: readonly number[]): Row {
  const ints = hidden ? bInts : aInts;
  const texts = hidden ? bTexts : aNames;
  const times = hidden ? bTimes : aTimes;
  const row = {
    id,
    uuid: uuid(`device-${id}`),
    actor: 100 + id,
    device_name: pick(texts, i),
    note: hidden ? pick([null, ...bTexts], i * 5) : pick(aNotes, i * 3),
    status: pick(hidden ? bAscii : aAscii, i * 7),
    os_version: pick(hidden ? bAscii : aAscii, i * 3 + 1),
    memory_usage: pick(ints, i),
    memory_total: pick(memoryTotals, i * 3),
    cpu_temp: pick(ints, i * 5 + 2),
    cpu_usage: pick(ints, i * 7 + 3),
    storage_usage: pick(ints, i * 11 + 5),
    provisioning_progress: i % 4 === 1 ? pick(hidden ? [0, INT_MAX, -1] : [50, 100, 1], i) : null,
    download_progress: i % 6 === 2 ? pick(hidden ? [0, INT_MIN] : [10, 99], i) : null,
    is_online: i % 3 !== 0,
    is_active: i % 7 !== 3,
    is_web_accessible: i % 2 === 0,
    is_undervolted: i % 5 === 1,
    created_at: pick(times, i * 3 + 1) ?? at("2023-03-03T03:03:03.333Z"),
    last_connectivity_event: i % 5 === 0 ? null : pick(times, i),
    last_vpn_event: pick(times, i * 5 + 3),
    belongs_to__application: hidden ? 3 : i % 4 === 0 ? 2 : 1,
    belongs_to__user: hidden ? pick([3, null], i) : pick([1, 2, null], i),
    // B's devices may be managed by A's: A's manages__device must not see them.
    is_managed_by__device: i % 4 === 3 ? pick(aIds, i * 7) : null,
    is_of__device_type: 1 + (i % 2),
  };
  return { ...row, overall_status: overallStatus(row) };
}

function tags(deviceIds: readonly number[], hidden: boolean, firstId: number): Row[] {
  const values = hidden ? bTexts : [...aNames.slice(0, 12), ...aNotes.slice(1)];
  const rows: Row[] = [];
  for (const [i, device] of deviceIds.entries()) {
    const keys = i % 3 === 0 ? ["location", "k"] : i % 3 === 1 ? ["k"] : [];
    for (const tag_key of keys) {
      rows.push({
        id: firstId + 2 * rows.length,
        device,
        tag_key,
        value: pick(values, i * 3 + rows.length),
        created_at: at(`2025-02-${String(1 + (rows.length % 28)).padStart(2, "0")}T00:00:00Z`),
      });
    }
  }
  return rows;
}

export interface World {
  readonly tables: Readonly<Record<TableName, readonly Row[]>>;
  readonly memberships: readonly Row[];
}

/** `scale` multiplies the devices (and their tags) of both organizations: 2.4 makes 144 devices. */
export function filterWorld({ hidden, scale = 1 }: { hidden: boolean; scale?: number }): World {
  const aIds = Array.from({ length: Math.round(36 * scale) }, (_, i) => 2 * i + 1);
  const bIds = hidden ? Array.from({ length: Math.round(24 * scale) }, (_, i) => 2 * i + 2) : [];
  const users: Row[] = [
    { id: 1, actor: 1, username: "alice" },
    { id: 2, actor: 2, username: "bob" },
    ...(hidden ? [{ id: 3, actor: 3, username: "carol" }] : []),
  ];
  const organizations: Row[] = [
    { id: 1, handle: "acme", name: "Acme 😀" },
    ...(hidden ? [{ id: 2, handle: "umbrella", name: "" }] : []),
  ];
  const app = (id: number, app_name: string, organization: number, user: number | null): Row => ({
    id,
    app_name,
    slug: `${organization === 1 ? "acme" : "umbrella"}/${id}`,
    organization,
    user,
    actor: 10 + id,
    uuid: uuid(`application-${id}`),
    is_for__device_type: 1,
    is_public: false,
    created_at: at(`2024-0${id}-01T00:00:00Z`),
  });
  const applications = [
    app(1, "alpha", 1, 1),
    app(2, "Beta fleet ’", 1, null),
    ...(hidden ? [app(3, "", 2, 3)] : []),
  ];
  const devices = [
    ...aIds.map((id, i) => device(id, i, false, aIds)),
    ...bIds.map((id, i) => device(id, i, true, aIds)),
  ].sort((a, b) => (a.id as number) - (b.id as number));
  const deviceTags = [...tags(aIds, false, 1), ...tags(bIds, true, 2)].sort(
    (a, b) => (a.id as number) - (b.id as number),
  );
  return {
    tables: {
      device: devices,
      application: applications,
      user: users,
      organization: organizations,
      device_type: [
        {
          id: 1,
          slug: "raspberrypi4-64",
          name: "Raspberry Pi 4",
          is_of__cpu_architecture: 1,
          state: "RELEASED",
        },
        { id: 2, slug: "intel-nuc", name: "Intel NUC", is_of__cpu_architecture: 2, state: "RELEASED" },
      ],
      device_tag: deviceTags,
    },
    // organization_membership_role: 1 administrator, 2 member (the rows the migrations create).
    memberships: [
      { id: 1, user: 1, is_member_of__organization: 1, organization_membership_role: 2 },
      { id: 2, user: 2, is_member_of__organization: 1, organization_membership_role: 1 },
      ...(hidden ? [{ id: 3, user: 3, is_member_of__organization: 2, organization_membership_role: 1 }] : []),
    ],
  };
}

const without = (row: Row, ...names: string[]) =>
  Object.fromEntries(Object.entries(row).filter(([name]) => !names.includes(name)));

/** Writes the world's rows, ids and all. A device's state has no API to write it: straight to the table. */
export async function insertWorld(db: Database, world: World): Promise<void> {
  const { tables } = world;
  const actors = [...tables.user, ...tables.application, ...tables.device].map((row) => ({
    id: row.actor as number,
  }));
  // biome-ignore lint/suspicious/noExplicitAny: plain rows, checked by the database's own constraints
  const p = db.prisma as any;
  await p.cpuArchitecture.createMany({
    data: [
      { id: 1, slug: "aarch64" },
      { id: 2, slug: "amd64" },
    ],
  });
  await p.deviceType.createMany({ data: tables.device_type });
  await p.actor.createMany({ data: actors });
  await p.organization.createMany({
    data: tables.organization.map((row) => ({ ...row, created_at: at("2024-01-01T00:00:00Z") })),
  });
  await p.user.createMany({
    data: tables.user.map((row) => ({
      ...row,
      email: `${row.username}@example.com`,
      password: "not-a-hash",
      jwt_secret: uuid(`jwt-${row.id}`),
      created_at: at("2024-01-01T00:00:00Z"),
    })),
  });
  await p.organizationMembership.createMany({
    data: world.memberships.map((row) => ({ ...row, created_at: at("2024-01-01T00:00:00Z") })),
  });
  await p.application.createMany({ data: tables.application });
  await p.device.createMany({ data: tables.device.map((row) => without(row, "overall_status")) });
  await p.deviceTag.createMany({ data: tables.device_tag });
}
