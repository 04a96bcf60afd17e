import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type ClientsWorld, clientsWorld, expectStatus } from "../support/sdk/clients-world.ts";

// Issue 19: balena reserves the `io.resin.` and `io.balena.` tag key prefixes and refuses keys with
// whitespace, with these messages (open-balena-api src/features/tags/validation.ts), on POST, PUT
// and PATCH. balena-sdk's `tags.set` sends the upsert: POST {value, device, tag_key}, then PATCH.

describe.each(databaseKinds)("tag keys on %s", (kind) => {
  let world: ClientsWorld;
  let fleet: number;
  let device: number;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    fleet = await world.fleet("tagged", "raspberrypi4-64");
    device = (await world.device(fleet)).id;
  });
  afterAll(() => world.close());

  const refusals: [string, string][] = [
    ["io.balena.update.strategy", "Tag keys beginning with io.balena. are reserved."],
    ["io.resin.something", "Tag keys beginning with io.resin. are reserved."],
    ["my key", "Tag keys cannot contain whitespace."],
    ["tab\tkey", "Tag keys cannot contain whitespace."],
    [" ", "Tag keys cannot contain whitespace."],
    // Whitespace is checked before the prefix, as balena does.
    ["io.balena.a b", "Tag keys cannot contain whitespace."],
  ];

  it.each(["device_tag", "application_tag"] as const)(
    "POST %s: balena's 400 for each refused key",
    async (resource) => {
      const parent = resource === "device_tag" ? { device } : { application: fleet };
      for (const [tag_key, message] of refusals) {
        const refused = await world.send("POST", `/v6/${resource}`, { value: "v", ...parent, tag_key });
        expect([refused.status, refused.body], tag_key).toEqual([400, message]);
      }
      const empty = await world.send("POST", `/v6/${resource}`, { value: "v", ...parent, tag_key: "" });
      expect([empty.status, empty.body]).toEqual([
        400,
        `It is necessary that each ${resource === "device_tag" ? "device" : "application"} tag has a tag key that has a Length (Type) that is greater than 0.`,
      ]);
      const count = await world.send("GET", `/v6/${resource}/$count`);
      expect(count.body).toEqual({ d: 0 });
    },
  );

  it("keys that only look alike are fine, and a PATCH to a refused key is refused", async () => {
    for (const tag_key of ["io.balena", "io.balenax.thing", "com.example.io.balena.x", "release-group"]) {
      expectStatus(await world.send("POST", "/v6/device_tag", { value: "v", device, tag_key }), 201, tag_key);
    }
    const renamed = await world.send(
      "PATCH",
      `/v6/device_tag?$filter=device eq ${device} and tag_key eq 'release-group'`,
      { tag_key: "io.resin.group" },
    );
    expect([renamed.status, renamed.body]).toEqual([400, "Tag keys beginning with io.resin. are reserved."]);
    const put = await world.send("PUT", `/v6/device_tag(device=${device},tag_key='release-group')`, {
      tag_key: "release group",
      value: "v",
    });
    expect([put.status, put.body]).toEqual([400, "Tag keys cannot contain whitespace."]);
  });
});
