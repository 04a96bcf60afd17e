import { expect } from "vitest";
import { basicWorld, World } from "../odata/write-world.ts";
import type { TestServer } from "../server.ts";
import { type GraphQLReply, graphql } from "./graphql.ts";

// What the GraphQL write tests share: calling a mutation, checking its error, the small world most
// tests start from (the OData write tests' World), and reading rows back straight from the database.

export type Row = Record<string, unknown>;
export const HEX32 = /^[0-9a-f]{32}$/;
export const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;

/** A device's fields and relations, as the write tests select them. */
export const DEVICE = `id uuid deviceName note isActive isOnline actor createdAt belongsToApplicationId isOfDeviceTypeId
  shouldBeRunningReleaseId belongsToApplication { id appName organization { id handle } } isOfDeviceType { id slug }
  shouldBeRunningRelease { id commit }`;
export const FLEET = `id appName slug deviceType isForDeviceTypeId organizationId shouldTrackLatestRelease shouldBeRunningReleaseId
  commit isPublic dependsOnApplicationId actor isForDeviceType { slug } organization { handle }`;
export const UPDATE_DEVICE = `mutation($id: Int, $uuid: String, $patch: DevicePatch!) {
  updateDevice(id: $id, uuid: $uuid, patch: $patch) { ${DEVICE} } }`;
export const UPDATE_FLEET = `mutation($id: Int, $patch: ApplicationPatch!) { updateApplication(id: $id, patch: $patch) { ${FLEET} } }`;

export function writeHelpers(server: () => TestServer) {
  const prisma = () => server().test.db.prisma;

  /** A mutation that must succeed: its data. */
  async function ok<T = Row>(query: string, variables?: Row, authorization?: string): Promise<T> {
    const reply = await graphql<T>(
      server(),
      query,
      variables,
      authorization === undefined ? {} : { authorization },
    );
    expect(reply.errors, JSON.stringify(reply.errors)).toBeUndefined();
    expect(reply.status).toBe(200);
    return reply.data as T;
  }

  /** A mutation that must fail with exactly one error of this code, whose message matches. */
  async function fails(
    query: string,
    variables: Row | undefined,
    code: string,
    message: RegExp,
    authorization?: string,
  ): Promise<GraphQLReply> {
    const reply = await graphql(
      server(),
      query,
      variables,
      authorization === undefined ? {} : { authorization },
    );
    expect(reply.errors?.length, JSON.stringify(reply)).toBe(1);
    const [error] = reply.errors ?? [];
    expect(error?.extensions?.code, JSON.stringify(error)).toBe(code);
    expect(error?.message).toMatch(message);
    return reply;
  }

  const devices = (ids: readonly number[]) =>
    prisma().device.findMany({ where: { id: { in: [...ids] } }, orderBy: { id: "asc" } });
  const device = (id: number) => prisma().device.findUnique({ where: { id } });
  const fleets = (ids: readonly number[]) =>
    prisma().application.findMany({ where: { id: { in: [...ids] } }, orderBy: { id: "asc" } });
  const fleet = (id: number) => prisma().application.findUnique({ where: { id } });
  const billingEvents = (ids: readonly number[]) =>
    prisma().billingEvent.findMany({ where: { device: { in: [...ids] } }, orderBy: { id: "asc" } });

  /** The device as the DEVICE selection must show it, computed from the database row. */
  async function expectedDevice(id: number) {
    const row = await prisma().device.findUniqueOrThrow({ where: { id } });
    const app = await prisma().application.findUniqueOrThrow({ where: { id: row.belongs_to__application } });
    const org = await prisma().organization.findUniqueOrThrow({ where: { id: app.organization } });
    const type = await prisma().deviceType.findUniqueOrThrow({ where: { id: row.is_of__device_type } });
    const pin = row.should_be_running__release
      ? await prisma().release.findUniqueOrThrow({ where: { id: row.should_be_running__release } })
      : null;
    return {
      id: row.id,
      uuid: row.uuid,
      deviceName: row.device_name,
      note: row.note,
      isActive: row.is_active,
      isOnline: row.is_online,
      actor: row.actor,
      createdAt: row.created_at.toISOString(),
      belongsToApplicationId: app.id,
      isOfDeviceTypeId: type.id,
      shouldBeRunningReleaseId: pin?.id ?? null,
      belongsToApplication: {
        id: app.id,
        appName: app.app_name,
        organization: { id: org.id, handle: org.handle },
      },
      isOfDeviceType: { id: type.id, slug: type.slug },
      shouldBeRunningRelease: pin && { id: pin.id, commit: pin.commit },
    };
  }

  return {
    expectedDevice,
    prisma,
    ok,
    fails,
    /** The small fleet setup most tests start from (as the OData write tests build it). */
    basicWorld: (label: string) => basicWorld(server().test.db, label),
    world: (label: string) => new World(server().test.db, label),
    devices,
    device,
    fleets,
    fleet,
    billingEvents,
  };
}

/** A user of their own (not an admin), through the public API; a member of `organizations`. */
export async function makeUser(
  server: TestServer,
  username: string,
  organizations: readonly number[] = [],
  role = "member",
): Promise<{ id: number; authorization: string }> {
  const password = `password-${username}`;
  const made = await server.app.inject({
    method: "POST",
    url: "/v6/user",
    payload: { username, email: `${username}@example.com`, password },
  });
  expect(made.statusCode, made.body).toBe(201);
  const id = JSON.parse(made.body).id as number;
  for (const organization of organizations) {
    const membership = await server.app.inject({
      method: "POST",
      url: "/v6/organization_membership",
      payload: { user: id, is_member_of__organization: organization, role },
    });
    expect(membership.statusCode, membership.body).toBe(201);
  }
  const login = await server.app.inject({ method: "POST", url: "/login_", payload: { username, password } });
  expect(login.statusCode, login.body).toBe(200);
  return { id, authorization: `Bearer ${login.body}` };
}
