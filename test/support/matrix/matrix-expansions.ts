import type { Oracle, ResourceName, Row, State, Table } from "./matrix-world.ts";

// The permission matrix's expansions (test/auth/permission-matrix-reads.test.ts): from each resource
// into the other organization, as data, and the shape of ids an expansion must come back in.

const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;

// Expansions into the other organization; each level is checked against the rows the caller may see.
export interface Expansion {
  readonly nav: string;
  readonly table: Table;
  readonly related: (row: Row, state: State) => readonly Row[];
  readonly nested?: readonly Expansion[];
}
const toOne =
  (table: Table, fk: string) =>
  (row: Row, state: State): readonly Row[] =>
    state[table].filter((r) => r.id === row[fk]);
const toMany =
  (table: Table, fk: string) =>
  (row: Row, state: State): readonly Row[] =>
    state[table].filter((r) => r[fk] === row.id);

const orgOf = (table: Table = "organization"): Expansion => ({
  nav: "organization",
  table,
  related: toOne("organization", "organization"),
});
const fleetOf = (nav: string, fk: string): Expansion => ({
  nav,
  table: "application",
  related: toOne("application", fk),
  nested: [orgOf()],
});

export const expansions: Record<ResourceName, readonly Expansion[] | undefined> = {
  application: [
    orgOf(),
    { nav: "owns__device", table: "device", related: toMany("device", "belongs_to__application") },
    {
      nav: "owns__release",
      table: "release",
      related: toMany("release", "belongs_to__application"),
    },
    {
      nav: "application_environment_variable",
      table: "application_environment_variable",
      related: toMany("application_environment_variable", "application"),
    },
    {
      nav: "application_tag",
      table: "application_tag",
      related: toMany("application_tag", "application"),
    },
  ],
  my_application: [
    orgOf(),
    { nav: "owns__device", table: "device", related: toMany("device", "belongs_to__application") },
  ],
  device: [
    fleetOf("belongs_to__application", "belongs_to__application"),
    { nav: "device_tag", table: "device_tag", related: toMany("device_tag", "device") },
  ],
  release: [fleetOf("belongs_to__application", "belongs_to__application")],
  device_tag: [
    {
      nav: "device",
      table: "device",
      related: toOne("device", "device"),
      nested: [fleetOf("belongs_to__application", "belongs_to__application")],
    },
  ],
  device_environment_variable: [
    {
      nav: "device",
      table: "device",
      related: toOne("device", "device"),
      nested: [fleetOf("belongs_to__application", "belongs_to__application")],
    },
  ],
  application_environment_variable: [fleetOf("application", "application")],
  application_tag: [fleetOf("application", "application")],
  // A billing event's device is a plain integer (it outlives the device): nothing to expand.
  billing_event: undefined,
  organization: [
    { nav: "application", table: "application", related: toMany("application", "organization") },
    {
      nav: "organization_membership",
      table: "organization_membership",
      related: toMany("organization_membership", "is_member_of__organization"),
      nested: [{ nav: "user", table: "user", related: toOne("user", "user") }],
    },
  ],
  organization_membership: [
    { nav: "user", table: "user", related: toOne("user", "user") },
    {
      nav: "is_member_of__organization",
      table: "organization",
      related: toOne("organization", "is_member_of__organization"),
    },
  ],
  user: [
    {
      nav: "organization_membership",
      table: "organization_membership",
      related: toMany("organization_membership", "user"),
      nested: [
        {
          nav: "is_member_of__organization",
          table: "organization",
          related: toOne("organization", "is_member_of__organization"),
        },
      ],
    },
  ],
  // An api_key's only link is to an actor, which is no resource: nothing to expand.
  api_key: undefined,
};

export const expandQuery = (list: readonly Expansion[]): string =>
  list.map((e) => `${e.nav}($select=id${e.nested ? `;$expand=${expandQuery(e.nested)}` : ""})`).join(",");

type Shape = { id: number } & { [nav: string]: number | Shape[] };

export function expectedShape(row: Row, list: readonly Expansion[], o: Oracle): Shape {
  const shape: Shape = { id: row.id } as Shape;
  for (const e of list) {
    shape[e.nav] = e
      .related(row, o.state)
      .filter((r) => o.readable(e.table, r))
      .slice()
      .sort(byId)
      .map((r) => expectedShape(r, e.nested ?? [], o));
  }
  return shape;
}

export function actualShape(entity: Record<string, unknown>, list: readonly Expansion[]): Shape {
  const shape: Shape = { id: entity.id as number } as Shape;
  for (const e of list) {
    const value = entity[e.nav];
    shape[e.nav] = Array.isArray(value)
      ? value.map((v) => actualShape(v as Record<string, unknown>, e.nested ?? []))
      : (value as Shape[]);
  }
  return shape;
}
