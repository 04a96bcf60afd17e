import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { loggedSdk, sdkCalls } from "../support/sdk/balena-sdk.ts";
import { type ClientsWorld, clientsWorld, expectStatus, type User } from "../support/sdk/clients-world.ts";

// Issue 30: as balena does, a username is lower-cased when the user is made and compared without
// case at login; an e-mail address is unique without case. balena-sdk's `auth.login({email,
// password})` sends `POST /login_ {"username": <what was typed>, "password"}`.

describe.each(databaseKinds)("usernames and e-mail addresses without case on %s", (kind) => {
  let world: ClientsWorld;
  let owner: User;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    owner = await world.user("name-owner");
  });
  afterAll(() => world.close());

  it("a username is stored lower-cased, its personal organization too, and logs in in any case", async () => {
    const made = await world.send("POST", "/v6/user", {
      username: "Mixed.Case",
      email: "Mixed.Case@Example.com",
      password: "mixed-password",
    });
    expectStatus(made, 201, "POST /v6/user");
    // The address is kept as typed; only its comparisons ignore case.
    expect(made.body).toMatchObject({ username: "mixed.case", email: "Mixed.Case@Example.com" });
    const org = await world.send("GET", "/v6/organization(handle='mixed.case')?$select=handle");
    expect(org.body).toEqual({ d: [{ handle: "mixed.case" }] });

    for (const [line, typed] of [
      ["19.7.3", "MIXED.CASE"],
      ["19.7.3", "mixed.case"],
      ["latest", "Mixed.Case"],
      ["latest", "mixed.case@example.com"],
      ["latest", "MIXED.CASE@EXAMPLE.COM"],
    ] as const) {
      const { sdk, log } =
        line === "latest" ? loggedSdk(world.server.url, "latest") : loggedSdk(world.server.url);
      await sdkCalls(log).call(`login ${typed}`, () =>
        sdk.auth.login({ email: typed, password: "mixed-password" }),
      );
      expect(log[0]?.request).toMatch(/POST \S*\/login_ /);
      expect(await sdk.auth.whoami(), `${line} ${typed}`).toMatchObject({ username: "mixed.case" });
    }
    const { sdk } = loggedSdk(world.server.url);
    const wrong = await sdkCalls([]).failure("wrong password", () =>
      sdk.auth.login({ email: "MIXED.CASE", password: "not-the-password" }),
    );
    expect(wrong.code).toBe("BalenaInvalidLoginCredentials");
  });

  it("a username or an address another user has, in another case, is taken: 409 naming the field", async () => {
    for (const [body, field] of [
      [{ username: "NAME-OWNER", email: "other@example.com", password: "other-password" }, "username"],
      [{ username: "other-user", email: owner.email.toUpperCase(), password: "other-password" }, "email"],
    ] as const) {
      const refused = await world.send("POST", "/v6/user", body);
      expect([refused.status, refused.body], field).toEqual([409, `"${field}" must be unique.`]);
    }
    const other = await world.user("other-user");
    const patched = await world.send(
      "PATCH",
      `/v6/user(${other.id})`,
      { email: ` ${owner.email}`.trim().toUpperCase() },
      other.token,
    );
    expect([patched.status, patched.body]).toEqual([409, '"email" must be unique.']);
    // Its own address in another case is its own.
    expectStatus(
      await world.send("PATCH", `/v6/user(${other.id})`, { email: other.email.toUpperCase() }, other.token),
      200,
    );
  });

  it("organization.membership.create finds the member whatever the case of the username", async () => {
    const member = await world.user("case-member");
    const { sdk, log } = loggedSdk(world.server.url);
    await sdk.auth.loginWithToken(owner.token);
    const created = (await sdkCalls(log).call("membership.create", () =>
      sdk.models.organization.membership.create({ organization: "name-owner", username: "Case-Member" }),
    )) as unknown as { user: { __id: number } };
    expect(created.user).toEqual({ __id: member.id });
  });
});
