import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type ClientsWorld, clientsWorld, expectStatus, type User } from "../support/sdk/clients-world.ts";

// Issue 19: balena logs a user in by e-mail when the login holds an `@` (open-balena-api
// src/infra/auth/auth.ts `findUser`, compared case-insensitively). balena-sdk's `auth.login` and the
// CLI send `POST /login_ {"username": <e-mail or username>, "password": …}`.

describe.each(databaseKinds)("login by e-mail on %s", (kind) => {
  let world: ClientsWorld;
  let ada: User;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    ada = await world.user("ada");
  });
  afterAll(() => world.close());

  const login = (username: string, password: string) => world.send("POST", "/login_", { username, password });

  it("the e-mail logs the user in, in any case, as the username does", async () => {
    for (const name of [ada.email, ada.email.toUpperCase(), ada.username]) {
      const reply = await login(name, ada.password);
      expectStatus(reply, 200, name);
      expect(reply.headers["content-type"]).toMatch(/^text\/plain/);
      const whoami = await world.send("GET", "/actor/v1/whoami", undefined, reply.raw);
      expect(whoami.body).toMatchObject({ actorType: "user", actorTypeId: ada.id, username: "ada" });
    }
  });

  it("a wrong password or an unknown e-mail is a 401", async () => {
    expect((await login(ada.email, "not-the-password")).status).toBe(401);
    expect((await login("nobody@example.com", ada.password)).status).toBe(401);
  });

  // Issue 30: an address belongs to one user, whatever its case (test/clients/user-names.test.ts).
  it("an e-mail another user has, in any case, is refused (409), and both still log in", async () => {
    const twin = await world.user("twin");
    const changed = await world.send("PATCH", `/v6/user(${twin.id})`, { email: "ADA@example.com" });
    expect([changed.status, changed.body]).toEqual([409, '"email" must be unique.']);
    expect((await login(ada.email, ada.password)).status).toBe(200);
    expect((await login(twin.email, twin.password)).status).toBe(200);
    expect((await login("twin", twin.password)).status).toBe(200);
  });

  it("the login throttle counts one account the same whether it is named by username or by e-mail", async () => {
    const grace = await world.user("grace");
    // Five failures from one address are free (README); the sixth makes this pair wait. Half are
    // sent by username, half by e-mail: one account, one count.
    for (let attempt = 0; attempt < 6; attempt++) {
      const name = attempt % 2 === 0 ? grace.username : grace.email.toUpperCase();
      expect((await login(name, "wrong")).status, `attempt ${attempt}`).toBe(401);
    }
    for (const name of [grace.email, grace.username]) {
      const refused = await login(name, grace.password);
      expect(refused.status, name).toBe(429);
      expect(refused.headers["retry-after"]).toBeDefined();
    }
    // Another account from the same address is not held back.
    expect((await login(ada.email, ada.password)).status).toBe(200);
  });
});
