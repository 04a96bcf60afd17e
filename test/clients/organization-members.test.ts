import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { graphql } from "../support/graphql/graphql.ts";
import { type Exchange, loggedSdk, sdkCalls } from "../support/sdk/balena-sdk.ts";
import { type ClientsWorld, clientsWorld, expectStatus, type User } from "../support/sdk/clients-world.ts";

// Issue 30, organization members as balena-sdk's own tests (organization-membership.spec.ts) drive
// them:
// - an organization's administrator adds a member by username: balena-sdk 19.7.3's
//   `organization.membership.create({organization, username, roleName?})` sends
//   `POST /v6/organization_membership {"username", "is_member_of__organization",
//   "organization_membership_role"?}` (balena-sdk 23 has no create: it invites); and changes and
//   removes memberships, by id or by the key (user, is_member_of__organization);
// - the members of an organization see each other's user rows, id and username only: `$expand=user`
//   lists everyone, `user/any(u: u/username eq …)` finds them, an e-mail address stays its owner's.

type Row = Record<string, unknown>;

describe.each(databaseKinds)("organization members on %s", (kind) => {
  let world: ClientsWorld;
  let alice: User;
  let bob: User;
  let carol: User;
  let dave: User;
  let aliceOrg: number;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    [alice, bob, carol, dave] = [
      await world.user("alice"),
      await world.user("bob"),
      await world.user("carol"),
      await world.user("dave"),
    ];
    const org = await world.send("GET", "/v6/organization(handle='alice')?$select=id");
    aliceOrg = ((org.body as { d: { id: number }[] }).d[0] as { id: number }).id;
  });
  afterAll(() => world.close());

  const sdkOf = async (user: User) => {
    const client = loggedSdk(world.server.url);
    await client.sdk.auth.loginWithToken(user.token);
    return { ...client, calls: sdkCalls(client.log) };
  };
  const latestOf = async (user: User) => {
    const client = loggedSdk(world.server.url, "latest");
    await client.sdk.auth.loginWithToken(user.token);
    return { ...client, calls: sdkCalls(client.log) };
  };
  const requestsOf = (log: readonly Exchange[], from: number) =>
    log.slice(from).map((exchange) => exchange.request.replace(world.server.url, ""));
  const rows = async (url: string, user: User) => {
    const reply = await world.send("GET", url, undefined, user.token);
    expectStatus(reply, 200, url);
    return (reply.body as { d: Row[] }).d;
  };

  it("the administrator adds members by username, with or without a role, as balena-sdk 19 sends it", async () => {
    const { sdk, log, calls } = await sdkOf(alice);
    let from = log.length;
    const bobs = (await calls.call("create bob", () =>
      sdk.models.organization.membership.create({ organization: "alice", username: "bob" }),
    )) as unknown as Row;
    expect(requestsOf(log, from)).toEqual([
      "GET /v6/organization(handle='alice')?$select=id",
      `POST /v6/organization_membership {"username":"bob","is_member_of__organization":${aliceOrg}}`,
    ]);
    expect(bobs).toMatchObject({
      user: { __id: bob.id },
      is_member_of__organization: { __id: aliceOrg },
      organization_membership_role: { __id: 2 },
    });
    expect(bobs).not.toHaveProperty("username");

    from = log.length;
    const carols = (await calls.call("create carol", () =>
      sdk.models.organization.membership.create({
        organization: aliceOrg,
        username: "carol",
        roleName: "administrator",
      }),
    )) as unknown as Row;
    expect(requestsOf(log, from)).toContain(
      `POST /v6/organization_membership {"username":"carol","is_member_of__organization":${aliceOrg},"organization_membership_role":1}`,
    );
    expect(carols).toMatchObject({ user: { __id: carol.id }, organization_membership_role: { __id: 1 } });

    // A username nobody has: 400 naming it; a member twice: balena's 409 "unique".
    const unknown = await calls.failure("unknown username", () =>
      sdk.models.organization.membership.create({ organization: "alice", username: "nobody-here" }),
    );
    expect((unknown as Error & { statusCode?: number }).statusCode).toBe(400);
    expect(unknown.message).toMatch(/'username' refers to user "nobody-here", which does not exist/);
    const twice = await calls.failure("bob twice", () =>
      sdk.models.organization.membership.create({ organization: "alice", username: "bob" }),
    );
    expect((twice as Error & { statusCode?: number }).statusCode).toBe(409);
    expect(twice.message).toMatch(/unique/i);
    // By user id too, as the API's own admin always could.
    const daves = await world.send(
      "POST",
      "/v6/organization_membership",
      { user: dave.id, is_member_of__organization: aliceOrg },
      alice.token,
    );
    expectStatus(daves, 201, "by user id");
    expectStatus(
      await world.send(
        "DELETE",
        `/v6/organization_membership(${(daves.body as Row).id})`,
        undefined,
        alice.token,
      ),
      200,
    );
  });

  it("nobody else may: a member, a stranger, for a user who exists or not, gets the same 401", async () => {
    const answers = async (user: User) => {
      const seen = [];
      for (const username of ["dave", "nobody-at-all"]) {
        const reply = await world.send(
          "POST",
          "/v6/organization_membership",
          { username, is_member_of__organization: aliceOrg },
          user.token,
        );
        seen.push([reply.status, reply.raw]);
      }
      return seen;
    };
    // bob is a member (not an administrator) of alice's organization; dave is no member at all.
    for (const user of [bob, dave]) {
      const [existing, absent] = await answers(user);
      expect(existing, user.username).toEqual(absent);
      expect(existing?.[0]).toBe(401);
    }
    // An organization nobody has: the same.
    const none = await world.send(
      "POST",
      "/v6/organization_membership",
      { username: "dave", is_member_of__organization: 987_654 },
      alice.token,
    );
    expect(none.status).toBe(401);
    expect(await rows(`/v6/organization_membership?$filter=user eq ${dave.id}`, dave)).toHaveLength(1);
  });

  it("members see each other's id and username, and nothing else of them", async () => {
    // bob, a member, expands every membership's user (balena-sdk's getAllByOrganization with $expand).
    const { sdk, calls } = await sdkOf(bob);
    const members = (await calls.call("getAllByOrganization", () =>
      sdk.models.organization.membership.getAllByOrganization("alice", {
        $select: "id",
        $expand: { user: { $select: ["id", "username"] } },
        $orderby: { id: "asc" },
      }),
    )) as unknown as { user: Row[] }[];
    expect(members.map((m) => m.user)).toEqual([
      [{ id: alice.id, username: "alice" }],
      [{ id: bob.id, username: "bob" }],
      [{ id: carol.id, username: "carol" }],
    ]);
    // getAllByUser by username: `user/any(u: u/username eq 'carol')`, on both SDK lines.
    const byUsername = await calls.call("getAllByUser", () =>
      sdk.models.organization.membership.getAllByUser("carol"),
    );
    expect(byUsername.map((m) => (m.user as { __id: number }).__id)).toEqual([carol.id]);
    const latest = await latestOf(bob);
    const latestByUsername = await latest.calls.call("v7 getAllByUser", () =>
      latest.sdk.models.organization.membership.getAllByUser("carol"),
    );
    expect(latestByUsername.map((m) => (m.user as { __id: number }).__id)).toEqual([carol.id]);

    // A whole user row: the owner-only fields of co-members read as null, one's own as they are.
    const users = await rows("/v6/user?$select=id,username,email,actor&$orderby=id asc", bob);
    expect(users).toEqual([
      { id: alice.id, username: "alice", email: null, actor: null },
      { id: bob.id, username: "bob", email: bob.email, actor: expect.any(Number) },
      { id: carol.id, username: "carol", email: null, actor: null },
    ]);
    // …in a filter and an order too: an address is never matched on another user's row.
    expect(await rows(`/v6/user?$select=id&$filter=email eq '${alice.email}'`, bob)).toEqual([]);
    expect(await rows(`/v6/user?$select=id&$filter=email eq '${bob.email}'`, bob)).toEqual([{ id: bob.id }]);
    expect(await rows("/v7/user?$select=id,email&$filter=email ne null", bob)).toEqual([
      { id: bob.id, email: bob.email },
    ]);
    // …and through a path from another resource, or an order by it.
    expect(
      await rows(`/v6/organization_membership?$select=id&$filter=user/email eq '${alice.email}'`, bob),
    ).toEqual([]);
    const byEmail = await rows(
      `/v6/organization_membership?$select=user&$filter=is_member_of__organization eq ${aliceOrg}&$orderby=user/email desc,id asc`,
      bob,
    );
    // Descending puts nulls first in PostgreSQL: bob's own address, the only one he reads, is last.
    expect(byEmail.at(-1)).toEqual({ user: { __id: bob.id } });
    // dave shares no organization with them: he sees only himself.
    expect(await rows("/v6/user?$select=id", dave)).toEqual([{ id: dave.id }]);
    // GraphQL: the same rows, the hidden fields null.
    const gql = await graphql<{ users: Row[] }>(world.server, "{ users { id username email } }", undefined, {
      authorization: `Bearer ${bob.token}`,
    });
    expect(gql.errors).toBeUndefined();
    expect(gql.data?.users).toEqual([
      { id: alice.id, username: "alice", email: null },
      { id: bob.id, username: "bob", email: bob.email },
      { id: carol.id, username: "carol", email: null },
    ]);
  });

  it("the administrator changes a role by the membership's key and removes members, on both SDK lines", async () => {
    const v6 = await sdkOf(alice);
    const v7 = await latestOf(alice);
    const key = { user: bob.id, is_member_of__organization: aliceOrg };
    let from = v6.log.length;
    await v6.calls.call("changeRole by key", () =>
      v6.sdk.models.organization.membership.changeRole(key, "administrator"),
    );
    expect(requestsOf(v6.log, from)).toEqual([
      "GET /v6/organization_membership_role(name='administrator')?$select=id",
      `PATCH /v6/organization_membership(user=${bob.id},is_member_of__organization=${aliceOrg}) {"organization_membership_role":1}`,
    ]);
    // As balena-sdk's test reads it back: the member's username through $expand.
    const membership = await v6.calls.call("get", () =>
      v6.sdk.models.organization.membership.get(key, {
        $select: "id",
        $expand: { user: { $select: ["id", "username"] }, organization_membership_role: { $select: "name" } },
      }),
    );
    expect(membership).toMatchObject({
      user: [{ id: bob.id, username: "bob" }],
      organization_membership_role: [{ name: "administrator" }],
    });
    await v7.calls.call("v7 changeRole", () =>
      v7.sdk.models.organization.membership.changeRole(key, "member"),
    );
    expect(
      await rows(
        `/v6/organization_membership(user=${bob.id},is_member_of__organization=${aliceOrg})?$select=role`,
        alice,
      ),
    ).toEqual([{ role: "member" }]);

    from = v7.log.length;
    await v7.calls.call("v7 remove by key", () => v7.sdk.models.organization.membership.remove(key));
    expect(requestsOf(v7.log, from)).toEqual([
      `DELETE /v7/organization_membership(user=${bob.id},is_member_of__organization=${aliceOrg})`,
    ]);
    const [carols] = await rows(
      `/v6/organization_membership?$select=id&$filter=user eq ${carol.id} and is_member_of__organization eq ${aliceOrg}`,
      alice,
    );
    await v6.calls.call("remove by id", () =>
      v6.sdk.models.organization.membership.remove(carols?.id as number),
    );
    expect(
      (
        await rows(
          `/v6/organization_membership?$select=user&$filter=is_member_of__organization eq ${aliceOrg}`,
          alice,
        )
      ).map((m) => (m.user as { __id: number }).__id),
    ).toEqual([alice.id]);
    // Once no longer members, bob and carol no longer see alice.
    expect(await rows("/v6/user?$select=id", bob)).toEqual([{ id: bob.id }]);
  });
});
