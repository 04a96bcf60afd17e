import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type ClientsWorld, clientsWorld, expectStatus, type User } from "../support/sdk/clients-world.ts";

// Issue 47, item 3: balena's last rules.
// - An organization keeps at least one administrator (balena-sdk's organization-membership.spec
//   removes the last administrator's membership and expects balena's rule text).
// - A `last_connectivity_event` written with `is_online` keeps the value sent (open-balena-api
//   stamps the time of the write only when the write gives none).

type Row = Record<string, unknown>;

const lastAdministrator =
  'It is necessary that each organization that is active, includes at least one organization membership that has an organization membership role that has a name (Auth) that is equal to "administrator"';

describe.each(databaseKinds)("balena's rules on %s", (kind) => {
  let world: ClientsWorld;
  let alice: User;
  let bob: User;
  let aliceOrg: number;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    alice = await world.user("rules-alice");
    bob = await world.user("rules-bob");
    const org = await world.send("GET", "/v6/organization(handle='rules-alice')?$select=id");
    aliceOrg = ((org.body as { d: Row[] }).d[0] as { id: number }).id;
  });
  afterAll(() => world.close());

  const membershipOf = async (user: User) => {
    const reply = await world.send(
      "GET",
      `/v6/organization_membership?$select=id&$filter=user eq ${user.id} and is_member_of__organization eq ${aliceOrg}`,
      undefined,
      alice.token,
    );
    expectStatus(reply, 200);
    return ((reply.body as { d: Row[] }).d[0] as { id: number }).id;
  };

  it("refuses to remove or demote an organization's only administrator, with balena's text", async () => {
    const own = await membershipOf(alice);
    for (const version of ["v6", "v7"]) {
      const removed = await world.send(
        "DELETE",
        `/${version}/organization_membership(${own})`,
        undefined,
        alice.token,
      );
      expect(removed.status).toBe(400);
      expect(removed.body).toBe(lastAdministrator);
    }
    const demoted = await world.send(
      "PATCH",
      `/v6/organization_membership(${own})`,
      { organization_membership_role: 2 },
      alice.token,
    );
    expect(demoted.status).toBe(400);
    expect(demoted.body).toBe(lastAdministrator);
    // A PUT without a role restores the default (member): a demotion too.
    const put = await world.send(
      "PUT",
      `/v6/organization_membership(${own})`,
      { user: alice.id, is_member_of__organization: aliceOrg },
      alice.token,
    );
    expect(put.status).toBe(400);
    // The membership is unchanged.
    const role = await world.send(
      "GET",
      `/v6/organization_membership(${own})?$select=role`,
      undefined,
      alice.token,
    );
    expect((role.body as { d: Row[] }).d).toEqual([{ role: "owner" }]);
  });

  it("lets one administrator go while another stays, never both", async () => {
    const added = await world.send(
      "POST",
      "/v6/organization_membership",
      { username: "rules-bob", is_member_of__organization: aliceOrg, organization_membership_role: 1 },
      alice.token,
    );
    expectStatus(added, 201);
    const bobs = await membershipOf(bob);
    const alices = await membershipOf(alice);
    // Both administrators removed in one bulk DELETE: refused whole, nothing removed.
    const both = await world.send(
      "DELETE",
      `/v6/organization_membership?$filter=is_member_of__organization eq ${aliceOrg}`,
      undefined,
      alice.token,
    );
    expect(both.status).toBe(400);
    expect(both.body).toBe(lastAdministrator);
    // Two writes at once (by the server's admin, whose rights neither changes), each removing one of
    // the two: exactly one passes.
    const [first, second] = await Promise.all([
      world.send("DELETE", `/v6/organization_membership(${bobs})`),
      world.send("PATCH", `/v6/organization_membership(${alices})`, { role: "member" }),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 400]);
    const administrators = await world.send(
      "GET",
      `/v6/organization_membership/$count?$filter=is_member_of__organization eq ${aliceOrg} and organization_membership_role/name eq 'administrator'`,
    );
    expect((administrators.body as { d: number }).d).toBe(1);
  });

  it("keeps a last_connectivity_event written with is_online, and stamps one when none is given", async () => {
    const fleet = await world.fleet("rules-fleet", "raspberrypi4-64", alice.token);
    const device = await world.device(fleet, {}, alice.token);
    const sent = "2026-01-02T03:04:05.000Z";
    for (const version of ["v6", "v7"]) {
      const patched = await world.send(
        "PATCH",
        `/${version}/device(${device.id})`,
        { is_online: version === "v6", last_connectivity_event: sent },
        alice.token,
      );
      expectStatus(patched, 200);
      const read = await world.send(
        "GET",
        `/v6/device(${device.id})?$select=last_connectivity_event`,
        undefined,
        alice.token,
      );
      expect((read.body as { d: Row[] }).d).toEqual([{ last_connectivity_event: sent }]);
    }
    const before = Date.now();
    expectStatus(
      await world.send("PATCH", `/v6/device(${device.id})`, { is_online: true }, alice.token),
      200,
    );
    const read = await world.send(
      "GET",
      `/v6/device(${device.id})?$select=last_connectivity_event`,
      undefined,
      alice.token,
    );
    const stamped = Date.parse(
      ((read.body as { d: Row[] }).d[0] as { last_connectivity_event: string }).last_connectivity_event,
    );
    expect(stamped).toBeGreaterThanOrEqual(before - 1000);
  });
});
