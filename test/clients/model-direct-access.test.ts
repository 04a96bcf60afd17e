import type { BalenaSDK } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { graphql } from "../support/graphql/graphql.ts";
import { type Exchange, loggedSdk } from "../support/sdk/balena-sdk.ts";
import { type ClientsWorld, clientsWorld, expectStatus, type User } from "../support/sdk/clients-world.ts";

// Issue 19: application.is_directly_accessible_by__user, the users with direct access to a fleet
// (the members of its organization), through organization_membership. balena-sdk 19.7.3's
// getAllDirectlyAccessible, getDirectlyAccessible, hasAny and getAppByName(…, 'directly_accessible')
// filter on `is_directly_accessible_by__user/any(dau:1 eq 1)`: with the user table limited to the
// caller, the fleets the caller is a member of, without the public fleets of others.

type Row = Record<string, unknown>;

describe.each(databaseKinds)("application.is_directly_accessible_by__user on %s", (kind) => {
  let world: ClientsWorld;
  let alice: User;
  let bob: User;
  let carol: User;
  const fleets = { alice: 0, bob: 0 };
  let aliceOrg: number;

  const rows = async (url: string, token?: string) => {
    const reply = await world.send("GET", url, undefined, token);
    expectStatus(reply, 200, `GET ${url}`);
    expect(reply.headers["x-sql-statements"], url).toBe("1");
    return (reply.body as { d: Row[] }).d;
  };

  /** The last request the SDK sent, without the server's origin. */
  const lastRequest = (log: Exchange[]) => log.at(-1)?.request.replace(world.server.url, "");

  const sdkOf = async (user: User): Promise<{ sdk: BalenaSDK; log: Exchange[] }> => {
    const client = loggedSdk(world.server.url);
    await client.sdk.auth.loginWithToken(user.token);
    return client;
  };

  beforeAll(async () => {
    world = await clientsWorld(kind);
    [alice, bob, carol] = [await world.user("alice"), await world.user("bob"), await world.user("carol")];
    fleets.alice = await world.fleet("alice-fleet", "raspberrypi4-64", alice.token);
    fleets.bob = await world.fleet("bob-fleet", "raspberrypi4-64", bob.token);
    // Bob's fleet is public: everyone reads it, but nobody else has direct access to it.
    expectStatus(
      await world.send("PATCH", `/v6/application(${fleets.bob})`, { is_public: true }, bob.token),
      200,
    );
    aliceOrg = ((await rows(`/v6/organization(handle='alice')?$select=id`))[0] as { id: number }).id;
  });
  afterAll(() => world?.close());

  describe("as balena-sdk 19.7.3 sends it", () => {
    it("getAll lists the public fleet too; getAllDirectlyAccessible only the member's own", async () => {
      const { sdk, log } = await sdkOf(alice);
      // Public fleets are bob's and the catalogue's host OS fleets (issue 30, item 11).
      const all = await sdk.models.application.getAll({
        $select: ["id", "app_name"],
        $filter: { is_host: false },
      });
      expect(all.map((fleet) => fleet.id).sort()).toEqual([fleets.alice, fleets.bob].sort());
      const direct = await sdk.models.application.getAllDirectlyAccessible({ $select: ["id", "app_name"] });
      expect(direct).toEqual([{ id: fleets.alice, app_name: "alice-fleet" }]);
      expect(lastRequest(log)).toBe(
        "GET /v6/application?$filter=is_directly_accessible_by__user/any(dau:1 eq 1)&$orderby=app_name asc&$select=id,app_name",
      );
    });

    it("getDirectlyAccessible and getAppByName(…, 'directly_accessible') find only direct fleets", async () => {
      const { sdk, log } = await sdkOf(alice);
      const own = await sdk.models.application.getDirectlyAccessible("alice/alice-fleet", { $select: "id" });
      expect(own).toEqual({ id: fleets.alice });
      expect(lastRequest(log)).toContain(
        "$filter=(is_directly_accessible_by__user/any(dau:1 eq 1)) and ((slug eq 'alice%2Falice-fleet') or (uuid eq 'alice%2Falice-fleet'))",
      );
      await expect(sdk.models.application.getDirectlyAccessible("bob/bob-fleet")).rejects.toThrow(
        /Application not found/,
      );
      expect((await sdk.models.application.get("bob/bob-fleet", { $select: "id" })).id).toBe(fleets.bob);
      const byName = await sdk.models.application.getAppByName(
        "alice-fleet",
        { $select: "id" },
        "directly_accessible",
      );
      expect(byName).toEqual({ id: fleets.alice });
      await expect(
        sdk.models.application.getAppByName("bob-fleet", { $select: "id" }, "directly_accessible"),
      ).rejects.toThrow(/Application not found/);
    });

    it("hasAny: a user whose organizations have no fleet has none, though a public fleet is readable", async () => {
      expect(await (await sdkOf(alice)).sdk.models.application.hasAny()).toBe(true);
      const { sdk, log } = await sdkOf(carol);
      expect(await sdk.models.application.hasAny()).toBe(false);
      expect(lastRequest(log)).toBe(
        "GET /v6/application?$filter=is_directly_accessible_by__user/any(dau:1 eq 1)&$orderby=app_name asc&$select=id",
      );
      expect(
        (await sdk.models.application.getAll({ $select: "id", $filter: { is_host: false } })).map(
          (fleet) => fleet.id,
        ),
      ).toEqual([fleets.bob]);
    });
  });

  describe("as any OData client", () => {
    it("filters with any() on a user id, and counts and expands the users, in one statement", async () => {
      // Bob joins Alice's organization as a member: he has direct access to her fleet now.
      expectStatus(
        await world.send("POST", "/v6/organization_membership", {
          user: bob.id,
          is_member_of__organization: aliceOrg,
          role: "member",
        }),
        201,
      );
      const byUser = await rows(
        `/v6/application?$select=id&$filter=is_directly_accessible_by__user/any(dau:dau/id eq ${bob.id})&$orderby=id asc`,
      );
      expect(byUser.map((row) => row.id)).toEqual([fleets.alice, fleets.bob].sort((a, b) => a - b));
      const [fleet] = await rows(
        `/v6/application(${fleets.alice})?$select=id&$expand=is_directly_accessible_by__user($select=username;$orderby=username asc),is_directly_accessible_by__user/$count`,
      );
      // Each user once, though the count and the list both go through the memberships.
      expect(fleet).toEqual({ id: fleets.alice, is_directly_accessible_by__user: 2 });
      const [listed] = await rows(
        `/v6/application(${fleets.alice})?$select=id&$expand=is_directly_accessible_by__user($select=username;$orderby=username asc)`,
      );
      expect(listed?.is_directly_accessible_by__user).toEqual([{ username: "alice" }, { username: "bob" }]);
      const all = await rows(
        `/v6/application?$select=id&$filter=is_directly_accessible_by__user/all(u:u/username eq 'bob')&$orderby=id asc`,
      );
      expect(all.map((row) => row.id)).toContain(fleets.bob);
      expect(all.map((row) => row.id)).not.toContain(fleets.alice);
      const ordered = await rows(
        `/v6/application?$select=id&$filter=id in (${fleets.alice}, ${fleets.bob})&$orderby=is_directly_accessible_by__user/$count desc`,
      );
      expect(ordered.map((row) => row.id)).toEqual([fleets.alice, fleets.bob]);
    });

    it("applies the caller's predicates to the users and the memberships it goes through", async () => {
      // Issue 30: the members of an organization read each other's user rows (id and username), so
      // Alice sees every member of her fleet's organization; a user of no shared organization is no
      // user of hers (below: Carol sees nobody on Bob's public fleet).
      const [seen] = await rows(
        `/v6/application(${fleets.alice})?$select=id&$expand=is_directly_accessible_by__user($select=username;$orderby=username asc)`,
        alice.token,
      );
      expect(seen?.is_directly_accessible_by__user).toEqual([{ username: "alice" }, { username: "bob" }]);
      // Carol reads Bob's public fleet, but not who has access to it.
      const [publicFleet] = await rows(
        `/v6/application(${fleets.bob})?$select=id&$expand=is_directly_accessible_by__user/$count`,
        carol.token,
      );
      expect(publicFleet).toEqual({ id: fleets.bob, is_directly_accessible_by__user: 0 });
    });

    it("reads the other way round as user.has_direct_access_to__application", async () => {
      const [user] = await rows(
        `/v6/user(${bob.id})?$select=username&$expand=has_direct_access_to__application($select=app_name;$orderby=app_name asc)`,
      );
      expect(user).toEqual({
        username: "bob",
        has_direct_access_to__application: [{ app_name: "alice-fleet" }, { app_name: "bob-fleet" }],
      });
    });

    it("is there in the older versions and refuses what a collection cannot do", async () => {
      const v5 = await rows(
        `/v5/application?$select=id&$filter=is_directly_accessible_by__user/any(dau:1 eq 1)`,
        carol.token,
      );
      expect(v5).toEqual([]);
      const bare = await world.send("GET", `/v6/application?$filter=is_directly_accessible_by__user/id eq 1`);
      expect(bare.status, bare.raw).toBe(400);
      const selected = await world.send("GET", `/v6/application?$select=is_directly_accessible_by__user`);
      expect(selected.status, selected.raw).toBe(400);
    });
  });

  it("is a GraphQL relation with a count and a where", async () => {
    const reply = await graphql<{
      application: {
        isDirectlyAccessibleByUser: { username: string }[];
        isDirectlyAccessibleByUserCount: number;
      };
      applications: { id: number }[];
    }>(
      world.server,
      `query($id: Int, $bob: Int) {
        application(id: $id) {
          isDirectlyAccessibleByUser(orderBy: [{ username: ASC }]) { username }
          isDirectlyAccessibleByUserCount
        }
        applications(where: { isDirectlyAccessibleByUser: { some: { id: { eq: $bob } } } }, orderBy: [{ id: ASC }]) { id }
      }`,
      { id: fleets.alice, bob: bob.id },
    );
    expect(reply.errors).toBeUndefined();
    expect(reply.data?.application).toEqual({
      isDirectlyAccessibleByUser: [{ username: "alice" }, { username: "bob" }],
      isDirectlyAccessibleByUserCount: 2,
    });
    expect(reply.data?.applications.map((fleet) => fleet.id)).toEqual(
      [fleets.alice, fleets.bob].sort((a, b) => a - b),
    );
  });
});
