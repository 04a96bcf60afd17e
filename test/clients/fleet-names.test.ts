import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type ClientsWorld, clientsWorld, expectStatus } from "../support/sdk/clients-world.ts";

// Issue 19: balena's fleet name rules. open-balena-api checks the characters when a fleet is
// created or renamed (src/features/applications/hooks/defaults.ts and rename.ts) and its model
// holds the length (src/balena.sbvr); pinejs answers a broken rule with the rule's own words.
// balena-sdk sends `POST /v6/application {app_name, is_for__device_type|device_type, organization}`
// and renames with `PATCH /v6/application(<id>) {app_name}`.

const characters = "App name may only contain [a-zA-Z0-9_-].";
const length =
  "It is necessary that each application has an app name that has a Length (Type) that is greater than or equal to 4 and is less than or equal to 100.";

describe.each(databaseKinds)("fleet names on %s", (kind) => {
  let world: ClientsWorld;

  beforeAll(async () => {
    world = await clientsWorld(kind);
  });
  afterAll(() => world.close());

  const create = (app_name: string) =>
    world.send("POST", "/v6/application", { app_name, device_type: "raspberrypi4-64" });

  it("4 to 100 letters, digits, '_' and '-' are a name", async () => {
    for (const name of ["abcd", "My_Fleet-2", "x".repeat(100)]) expectStatus(await create(name), 201, name);
  });

  it.each([
    ["abc", length],
    ["ab", length],
    ["x".repeat(101), length],
    ["my fleet", characters],
    ["", characters],
    ["dots.are.out", characters],
    ["café", characters],
    ["ab c", characters],
  ])("%j is refused with balena's message, nothing created", async (name, message) => {
    const refused = await create(name);
    expect([refused.status, refused.body]).toEqual([400, message]);
    const count = await world.send(
      "GET",
      `/v6/application/$count?$filter=app_name eq '${encodeURIComponent(name)}'`,
    );
    expect(count.body).toEqual({ d: 0 });
  });

  it("a rename follows the same rules", async () => {
    const id = ((await create("renamable")).body as { id: number }).id;
    expect((await world.send("PATCH", `/v6/application(${id})`, { app_name: "abc" })).body).toBe(length);
    expect((await world.send("PATCH", `/v6/application(${id})`, { app_name: "new name" })).body).toBe(
      characters,
    );
    expectStatus(await world.send("PATCH", `/v6/application(${id})`, { app_name: "renamed" }), 200);
    const read = await world.send("GET", `/v6/application(${id})?$select=app_name`);
    expect(read.body).toEqual({ d: [{ app_name: "renamed" }] });
  });

  it("GraphQL creates and renames by the same rules", async () => {
    const reply = await world.send("POST", "/graphql", {
      query: 'mutation { createApplication(input: {appName: "abc", deviceType: "raspberrypi4-64"}) { id } }',
    });
    expect(JSON.stringify(reply.body)).toContain("greater than or equal to 4");
  });
});
