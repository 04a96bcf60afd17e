import type { PrismaClient } from "../../../src/generated/prisma/client.ts";

// The world of the permission matrix and an oracle of issue 5's rules (as issue 15 narrowed them: a
// public fleet shows only itself and its final, successful, valid releases), written in JavaScript over
// the rows Prisma reads back, independently of the SQL predicates the server compiles.

/** `outsider` belongs to no organization; `none` sends no credential at all. */
export type ActorName = "admin" | "alice" | "bob" | "outsider" | "device" | "fleet" | "none";
export const actorNames: readonly ActorName[] = [
  "admin",
  "alice",
  "bob",
  "outsider",
  "device",
  "fleet",
  "none",
];

export type ResourceName =
  | "application"
  | "my_application"
  | "device"
  | "release"
  | "device_tag"
  | "device_environment_variable"
  | "application_environment_variable"
  | "application_tag"
  | "billing_event"
  | "organization"
  | "organization_membership"
  | "user"
  | "api_key";
export type Table = Exclude<ResourceName, "my_application">;

export const resourceNames: readonly ResourceName[] = [
  "application",
  "my_application",
  "device",
  "release",
  "device_tag",
  "device_environment_variable",
  "application_environment_variable",
  "application_tag",
  "billing_event",
  "organization",
  "organization_membership",
  "user",
  "api_key",
];
export const tables: readonly Table[] = resourceNames.filter((r): r is Table => r !== "my_application");

export const tableOf = (resource: ResourceName): Table =>
  resource === "my_application" ? "application" : resource;

export type Row = { readonly id: number } & Readonly<Record<string, unknown>>;
export type State = Readonly<Record<Table, readonly Row[]>>;

interface Delegate {
  findMany(args: { orderBy: { id: "asc" } }): Promise<Row[]>;
  count(): Promise<number>;
}

function delegate(prisma: PrismaClient, table: Table): Delegate {
  const delegates: Record<Table, unknown> = {
    application: prisma.application,
    device: prisma.device,
    release: prisma.release,
    device_tag: prisma.deviceTag,
    device_environment_variable: prisma.deviceEnvironmentVariable,
    application_environment_variable: prisma.applicationEnvironmentVariable,
    application_tag: prisma.applicationTag,
    billing_event: prisma.billingEvent,
    organization: prisma.organization,
    organization_membership: prisma.organizationMembership,
    user: prisma.user,
    api_key: prisma.apiKey,
  };
  return delegates[table] as Delegate;
}

/** Every row of a table, by id, straight from the database. */
export function tableRows(prisma: PrismaClient, table: Table): Promise<Row[]> {
  return delegate(prisma, table).findMany({ orderBy: { id: "asc" } });
}

export function countRows(prisma: PrismaClient, table: Table): Promise<number> {
  return delegate(prisma, table).count();
}

export async function loadState(prisma: PrismaClient): Promise<State> {
  const state: Partial<Record<Table, readonly Row[]>> = {};
  for (const table of tables) state[table] = await tableRows(prisma, table);
  return state as State;
}

/** Who a credential stands for, as the oracle needs it. */
export type Who =
  | { readonly kind: "user"; readonly userId: number; readonly actor: number; readonly admin: boolean }
  | { readonly kind: "device"; readonly deviceId: number; readonly appId: number }
  | { readonly kind: "fleet"; readonly appId: number }
  | { readonly kind: "none" };

const num = (row: Row | undefined, field: string): number | undefined => {
  const value = row?.[field];
  return typeof value === "number" ? value : undefined;
};

/** Issue 5's rules over a snapshot of the database, for one caller. */
export class Oracle {
  private readonly byId: Record<Table, Map<number, Row>>;
  private readonly memberOrgs = new Set<number>();
  private readonly ownedOrgs = new Set<number>();
  /** The users who share an organization with the caller (the caller among them). */
  private readonly coMembers = new Set<number>();

  constructor(
    readonly state: State,
    readonly who: Who,
  ) {
    const byId: Partial<Record<Table, Map<number, Row>>> = {};
    for (const table of tables) byId[table] = new Map(state[table].map((row) => [row.id, row]));
    this.byId = byId as Record<Table, Map<number, Row>>;
    if (who.kind === "user") {
      for (const m of state.organization_membership) {
        if (m.user !== who.userId) continue;
        this.memberOrgs.add(m.is_member_of__organization as number);
        // organization_membership_role 1 is administrator (balena's name for an owner).
        if (m.organization_membership_role === 1) this.ownedOrgs.add(m.is_member_of__organization as number);
      }
      for (const m of state.organization_membership) {
        if (this.memberOrgs.has(m.is_member_of__organization as number)) this.coMembers.add(m.user as number);
      }
    }
  }

  /**
   * Issue 30: balena's guest has no permission at all on users and API keys, so a read that touches
   * one of them (at the root, in an expansion, a path or a relation) is refused (401), not empty.
   */
  refuses(resource: ResourceName | Table): boolean {
    return this.who.kind === "none" && (resource === "user" || resource === "api_key");
  }

  row(table: Table, id: unknown): Row | undefined {
    return typeof id === "number" ? this.byId[table].get(id) : undefined;
  }

  /** A to-one path step: the row, if the caller can see it (a path never crosses an invisible row). */
  seen(table: Table, id: unknown): Row | undefined {
    const row = this.row(table, id);
    return row && this.readable(table, row) ? row : undefined;
  }

  private memberFleet(appId: unknown): boolean {
    const app = this.row("application", appId);
    return app !== undefined && this.memberOrgs.has(app.organization as number);
  }

  private fleetOfDevice(deviceId: unknown): number | undefined {
    return num(this.row("device", deviceId), "belongs_to__application");
  }

  private manageableKey(row: Row): boolean {
    if (this.who.kind !== "user") return false;
    const actor = row.is_of__actor;
    if (actor === this.who.actor) return true;
    const app = this.state.application.find((a) => a.actor === actor);
    if (app) return this.memberOrgs.has(app.organization as number);
    const device = this.state.device.find((d) => d.actor === actor);
    if (device) return this.memberFleet(device.belongs_to__application);
    return false;
  }

  /** A public fleet's final, successful, valid release: every caller, even without a credential, reads it. */
  private publicRelease(row: Row): boolean {
    const app = this.row("application", row.belongs_to__application);
    return (
      app?.is_public === true &&
      row.is_final === true &&
      row.status === "success" &&
      row.is_invalidated === false
    );
  }

  readable(resource: ResourceName, row: Row): boolean {
    const who = this.who;
    switch (who.kind) {
      case "none":
        if (resource === "application") return row.is_public === true;
        return resource === "release" && this.publicRelease(row);
      case "fleet":
        if (resource === "application") return row.id === who.appId || row.is_public === true;
        return resource === "release" && this.publicRelease(row);
      case "device":
        switch (resource) {
          case "device":
            return row.id === who.deviceId;
          case "device_tag":
          case "device_environment_variable":
            return row.device === who.deviceId;
          case "application":
            return row.id === who.appId || row.is_public === true;
          case "release":
            return row.belongs_to__application === who.appId || this.publicRelease(row);
          case "application_environment_variable":
            return row.application === who.appId;
          default:
            return false;
        }
      case "user":
        if (resource === "my_application") return this.memberOrgs.has(row.organization as number);
        if (who.admin) return true;
        switch (resource) {
          case "application":
            return row.is_public === true || this.memberOrgs.has(row.organization as number);
          case "release":
            return this.memberFleet(row.belongs_to__application) || this.publicRelease(row);
          case "device":
            // The user a device belongs to sees that device's own row (nothing hanging off it).
            return this.memberFleet(row.belongs_to__application) || row.belongs_to__user === who.userId;
          case "device_tag":
          case "device_environment_variable":
          case "billing_event":
            return this.memberFleet(this.fleetOfDevice(row.device));
          case "application_environment_variable":
          case "application_tag":
            return this.memberFleet(row.application);
          case "user":
            // Issue 30: the members of an organization see each other (their id and username).
            return row.id === who.userId || this.coMembers.has(row.id);
          case "organization":
            return this.memberOrgs.has(row.id);
          case "organization_membership":
            return this.memberOrgs.has(row.is_member_of__organization as number);
          case "api_key":
            return this.manageableKey(row);
        }
    }
  }

  /** Whether the caller may change (or own, on create) this row; `row` may be a body about to be created. */
  writable(table: Table, row: Row): boolean {
    const who = this.who;
    if (who.kind !== "user") return false;
    if (who.admin) return true;
    switch (table) {
      case "application":
        return this.memberOrgs.has(row.organization as number);
      case "device":
      case "release":
        return this.memberFleet(row.belongs_to__application);
      case "device_tag":
      case "device_environment_variable":
        return this.memberFleet(this.fleetOfDevice(row.device));
      case "application_environment_variable":
      case "application_tag":
        return this.memberFleet(row.application);
      case "billing_event":
        return this.memberFleet(this.fleetOfDevice(row.device));
      case "user":
        return row.id === who.userId;
      case "organization":
        return this.ownedOrgs.has(row.id);
      case "organization_membership":
        return this.ownedOrgs.has(row.is_member_of__organization as number);
      case "api_key":
        return this.manageableKey(row);
    }
  }
}
