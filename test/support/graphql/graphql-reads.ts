import { expect } from "vitest";
import type { Application, Device } from "../../../src/generated/prisma/client.ts";
import { buildFixture, type Fixture } from "../core/read-fixture.ts";
import type { DatabaseKind } from "../databases.ts";
import { overallStatus } from "../oracle/oracle.ts";
import { startTestServer, type TestServer } from "../server.ts";
import { type GraphQLReply, graphql } from "./graphql.ts";

export { cmp, type Op, ops, overallStatus } from "../oracle/oracle.ts";

// Expectations of the GraphQL read tests, computed in JavaScript from the rows test/support/core/read-fixture.ts
// inserted (the same world as the OData read tests), never by asking src/graphql.

export type Row = Record<string, unknown>;

export const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;
/** Code-point order, which is what the test databases' C collation sorts by. */
export const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
export const idsOf = (rows: readonly { id: number }[]) => rows.map((row) => ({ id: row.id }));
export const iso = (date: Date | null) => date?.toISOString() ?? null;

/** A device as GraphQL shows these fields of it, written out by hand. */
export function deviceFields(d: Device): Row {
  return {
    id: d.id,
    uuid: d.uuid,
    deviceName: d.device_name,
    note: d.note,
    isOnline: d.is_online,
    isActive: d.is_active,
    cpuTemp: d.cpu_temp,
    downloadProgress: d.download_progress,
    createdAt: iso(d.created_at),
    lastConnectivityEvent: iso(d.last_connectivity_event),
    belongsToApplicationId: d.belongs_to__application,
    isRunningReleaseId: d.is_running__release,
    shouldBeRunningReleaseId: d.should_be_running__release,
    isManagedByDeviceId: d.is_managed_by__device,
    osVersion: d.os_version,
    ipAddress: d.ip_address,
    memoryUsage: d.memory_usage,
    overallStatus: overallStatus(d),
  };
}
export const deviceSelection =
  "id uuid deviceName note isOnline isActive cpuTemp downloadProgress createdAt lastConnectivityEvent " +
  "belongsToApplicationId isRunningReleaseId shouldBeRunningReleaseId isManagedByDeviceId osVersion " +
  "ipAddress memoryUsage overallStatus";

/** The server and fixture of one database kind, with the lookups every read test uses. */
export class ReadWorld {
  server!: TestServer;
  fx!: Fixture;

  async start(kind: DatabaseKind): Promise<void> {
    this.server = await startTestServer(kind);
    this.fx = await buildFixture(this.server.test.db);
  }

  close(): Promise<void> {
    return this.server.close();
  }

  appById = (id: number) => this.fx.applications.find((a) => a.id === id) as Application;
  appNamed = (name: string) => this.fx.applications.find((a) => a.app_name === name) as Application;
  devicesOf = (app: Application) => this.fx.devices.filter((d) => d.belongs_to__application === app.id);
  tagsOf = (d: Device) => this.fx.deviceTags.filter((t) => t.device === d.id);
  releaseOf = (id: number | null) => this.fx.releases.find((r) => r.id === id);

  /** A query that must succeed in `statements` SQL statements (one for a query's root fields). */
  async ok<T = Row>(query: string, variables?: Row, statements = 1): Promise<T> {
    const reply = await graphql<T>(this.server, query, variables);
    expect(reply.errors, JSON.stringify(reply.errors)).toBeUndefined();
    expect(reply.status).toBe(200);
    expect(reply.statements).toBe(statements);
    return reply.data as T;
  }

  /** A query that must fail with `code`; returns the reply. */
  async fails(query: string, code: string, message?: RegExp, variables?: Row): Promise<GraphQLReply> {
    const reply = await graphql(this.server, query, variables);
    expect(reply.errors?.[0]?.extensions?.code, JSON.stringify(reply.errors)).toBe(code);
    if (message) expect(reply.errors?.[0]?.message).toMatch(message);
    return reply;
  }

  /** `devices(where: …) { id }` is exactly the fixture's devices for which `predicate` holds. */
  async expectDevices(where: Row, predicate: (d: Device) => boolean): Promise<void> {
    const data = await this.ok<{ devices: Row[] }>("query($w: DeviceWhere) { devices(where: $w) { id } }", {
      w: where,
    });
    expect(data.devices).toEqual(idsOf(this.fx.devices.filter(predicate).sort(byId)));
  }

  async expectApplications(where: Row, predicate: (a: Application) => boolean): Promise<void> {
    const data = await this.ok<{ applications: Row[] }>(
      "query($w: ApplicationWhere) { applications(where: $w) { id } }",
      { w: where },
    );
    expect(data.applications).toEqual(idsOf(this.fx.applications.filter(predicate).sort(byId)));
  }
}
