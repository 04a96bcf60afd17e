import type { BalenaSDK } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { graphql } from "../support/graphql/graphql.ts";
import { type Exchange, loggedSdk } from "../support/sdk/balena-sdk.ts";
import { type ClientsWorld, clientsWorld, expectStatus, type User } from "../support/sdk/clients-world.ts";

// Issue 19: organization_membership.organization_membership_role, a link to balena's roles
// ("administrator", "member") as balena-sdk 19.7.3 reads and writes it. The older text field `role`
// ("owner", "member") stays readable and writable: it is the same fact.

type Row = Record<string, unknown>;

describe.each(databaseKinds)("organization_membership_role on %s", (kind) => {
  let world: ClientsWorld;
  let alice: User;
  let bob: User;
  let carol: User;
  let aliceOrg: number;
  const memberships = { bob: 0, carol: 0 };

  const get = async (url: string, token?: string) => {
    const reply = await world.send("GET", url, undefined, token);
    expectStatus(reply, 200, `GET ${url}`);
    return (reply.body as { d: Row[] }).d;
  };
  const requestsOf = (log: Exchange[], from: number) =>
    log.slice(from).map((exchange) => exchange.request.replace(world.server.url, ""));
  const sdkOf = async (user: User): Promise<{ sdk: BalenaSDK; log: Exchange[] }> => {
    const client = loggedSdk(world.server.url);
    await client.sdk.auth.loginWithToken(user.token);
    return client;
  };
  const storedRole = async (membership: number) =>
    (
      await world.server.test.db.prisma.organizationMembership.findUniqueOrThrow({
        where: { id: membership },
        include: { Role: true },
      })
    ).Role.name;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    [alice, bob, carol] = [await world.user("alice"), await world.user("bob"), await world.user("carol")];
    aliceOrg = ((await get(`/v6/organization(handle='alice')?$select=id`))[0] as { id: number }).id;
    // The admin adds Bob (by the role link) and Carol (by the text role) to Alice's organization.
    const [member] = await get(`/v6/organization_membership_role(name='member')?$select=id`);
    const bobs = await world.send("POST", "/v6/organization_membership", {
      user: bob.id,
      is_member_of__organization: aliceOrg,
      organization_membership_role: member?.id,
    });
    expectStatus(bobs, 201, "POST membership with the link");
    expect(bobs.body).toMatchObject({ organization_membership_role: { __id: member?.id }, role: "member" });
    memberships.bob = (bobs.body as { id: number }).id;
    const carols = await world.send("POST", "/v6/organization_membership", {
      user: carol.id,
      is_member_of__organization: aliceOrg,
      role: "member",
    });
    expectStatus(carols, 201, "POST membership with the text role");
    memberships.carol = (carols.body as { id: number }).id;
  });
  afterAll(() => world?.close());

  it("lists balena's two roles to every user, by id or by name", async () => {
    expect(await get("/v6/organization_membership_role?$orderby=id asc", carol.token)).toEqual([
      { id: 1, name: "administrator" },
      { id: 2, name: "member" },
    ]);
    expect(await get(`/v6/organization_membership_role(name='administrator')`, carol.token)).toEqual([
      { id: 1, name: "administrator" },
    ]);
    const write = await world.send("POST", "/v6/organization_membership_role", { name: "king" });
    expect(write.status, write.raw).toBe(400);
  });

  it("reads the link as {__id}, expands, filters and orders by it, and keeps `role` beside it", async () => {
    const rows = await get(
      `/v6/organization_membership?$select=user,organization_membership_role,role&$filter=is_member_of__organization eq ${aliceOrg}&$orderby=organization_membership_role/name asc,user asc`,
      alice.token,
    );
    expect(rows).toEqual([
      { user: { __id: alice.id }, organization_membership_role: { __id: 1 }, role: "owner" },
      { user: { __id: bob.id }, organization_membership_role: { __id: 2 }, role: "member" },
      { user: { __id: carol.id }, organization_membership_role: { __id: 2 }, role: "member" },
    ]);
    const admins = await get(
      `/v6/organization_membership?$select=user&$expand=organization_membership_role($select=name)&$filter=organization_membership_role/name eq 'administrator' and is_member_of__organization eq ${aliceOrg}`,
    );
    expect(admins).toEqual([
      { user: { __id: alice.id }, organization_membership_role: [{ name: "administrator" }] },
    ]);
    const owners = await get(
      `/v6/organization_membership?$select=user&$filter=role eq 'owner' and is_member_of__organization eq ${aliceOrg}`,
    );
    expect(owners).toEqual([{ user: { __id: alice.id } }]);
    const counted = await get(
      `/v6/organization_membership_role?$select=name&$expand=organization_membership/$count($filter=is_member_of__organization eq ${aliceOrg})&$orderby=id asc`,
    );
    expect(counted).toEqual([
      { name: "administrator", organization_membership: 1 },
      { name: "member", organization_membership: 2 },
    ]);
    // The versions before v6 read the text role as they always did.
    const [v5] = await get(`/v5/organization_membership(${memberships.bob})?$select=role`);
    expect(v5).toEqual({ role: "member" });
  });

  it("membership.changeRole: only an administrator may, and the new administrator then may too", async () => {
    // Bob, a member, may not promote Carol.
    const asBob = await sdkOf(bob);
    await expect(
      asBob.sdk.models.organization.membership.changeRole(memberships.carol, "administrator"),
    ).rejects.toThrow();
    expect(await storedRole(memberships.carol)).toBe("member");

    // Alice, the administrator, promotes Bob, with the requests balena-sdk sends.
    const asAlice = await sdkOf(alice);
    const from = asAlice.log.length;
    await asAlice.sdk.models.organization.membership.changeRole(memberships.bob, "administrator");
    expect(requestsOf(asAlice.log, from)).toEqual([
      "GET /v6/organization_membership_role(name='administrator')?$select=id",
      `PATCH /v6/organization_membership(${memberships.bob}) {"organization_membership_role":1}`,
    ]);
    expect(await storedRole(memberships.bob)).toBe("administrator");

    // Now Bob may change Carol's role, and back.
    await asBob.sdk.models.organization.membership.changeRole(memberships.carol, "administrator");
    expect(await storedRole(memberships.carol)).toBe("administrator");
    await asBob.sdk.models.organization.membership.changeRole(memberships.carol, "member");
    expect(await storedRole(memberships.carol)).toBe("member");

    await expect(
      asAlice.sdk.models.organization.membership.changeRole(memberships.carol, "king"),
    ).rejects.toThrow(/Organization membership role not found: king/);
  });

  it("membership.get and getAllByOrganization return the link", async () => {
    const { sdk } = await sdkOf(alice);
    const byKey = await sdk.models.organization.membership.get(
      { user: carol.id, is_member_of__organization: aliceOrg },
      { $select: ["id", "organization_membership_role"] },
    );
    expect(byKey).toEqual({ id: memberships.carol, organization_membership_role: { __id: 2 } });
    const all = await sdk.models.organization.membership.getAllByOrganization("alice", {
      $select: "user",
      $expand: { organization_membership_role: { $select: "name" } },
      $orderby: "user asc",
    });
    expect(all.map((m) => [(m.user as { __id: number }).__id, m.organization_membership_role])).toEqual([
      [alice.id, [{ name: "administrator" }]],
      [bob.id, [{ name: "administrator" }]],
      [carol.id, [{ name: "member" }]],
    ]);
  });

  it("writes `role` and the link as one fact", async () => {
    const patch = (body: Row) =>
      world.send("PATCH", `/v6/organization_membership(${memberships.carol})`, body, alice.token);
    expectStatus(await patch({ role: "owner" }), 200);
    expect(await storedRole(memberships.carol)).toBe("administrator");
    expectStatus(await patch({ organization_membership_role: 2, role: "member" }), 200);
    expect(await storedRole(memberships.carol)).toBe("member");
    const clash = await patch({ organization_membership_role: 1, role: "member" });
    expect(clash.status, clash.raw).toBe(400);
    expect(clash.body).toBe("'role' and 'organization_membership_role' name different roles");
    const unknown = await patch({ organization_membership_role: 99 });
    expect(unknown.status, unknown.raw).toBe(400);
    expect(await storedRole(memberships.carol)).toBe("member");
    // PUT restores what it leaves out: the role goes back to member.
    expectStatus(await patch({ role: "owner" }), 200);
    const put = await world.send(
      "PUT",
      `/v6/organization_membership(${memberships.carol})`,
      { organization_membership_role: 2 },
      alice.token,
    );
    expectStatus(put, 200);
    expect(await storedRole(memberships.carol)).toBe("member");
  });

  it("is a GraphQL relation beside the text role", async () => {
    const reply = await graphql<{
      organizationMemberships: {
        role: string;
        organizationMembershipRoleId: number;
        organizationMembershipRole: { name: string };
      }[];
    }>(
      world.server,
      `query($org: Int) {
        organizationMemberships(where: { isMemberOfOrganizationId: { eq: $org } }, orderBy: [{ userId: ASC }]) {
          role organizationMembershipRoleId organizationMembershipRole { name }
        }
      }`,
      { org: aliceOrg },
    );
    expect(reply.errors).toBeUndefined();
    expect(reply.data?.organizationMemberships).toEqual([
      {
        role: "owner",
        organizationMembershipRoleId: 1,
        organizationMembershipRole: { name: "administrator" },
      },
      {
        role: "owner",
        organizationMembershipRoleId: 1,
        organizationMembershipRole: { name: "administrator" },
      },
      { role: "member", organizationMembershipRoleId: 2, organizationMembershipRole: { name: "member" } },
    ]);
  });
});
