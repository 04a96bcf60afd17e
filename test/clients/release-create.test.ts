import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type ClientsWorld, clientsWorld, expectStatus, type User } from "../support/sdk/clients-world.ts";

// Issue 19: a release created as the balena CLI creates it (balena-release `createRelease`, used
// by `balena deploy` and `balena push` in local mode) and as balena-sdk's tests do:
// `is_created_by__user`, a JSON `composition` and `start_timestamp` as epoch milliseconds.

const composition = {
  version: "2.1",
  services: {
    main: { build: { context: "." }, privileged: true, labels: { "io.balena.features.dbus": "1" } },
  },
  volumes: { data: {} },
};

describe.each(databaseKinds)("release creation as balena clients send it on %s", (kind) => {
  let world: ClientsWorld;
  let dev: User;
  let other: User;
  let fleet: number;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    dev = await world.user("deployer");
    other = await world.user("bystander");
    fleet = await world.fleet("deploy-target", "raspberrypi4-64", dev.token);
  });
  afterAll(() => world.close());

  const count = async (filter: string) =>
    (await world.send("GET", `/v6/release/$count?$filter=${encodeURIComponent(filter)}`)).body;

  it("POST /v6/release with the CLI's body: 201, every value stored as sent", async () => {
    const created = await world.send(
      "POST",
      "/v6/release",
      {
        belongs_to__application: fleet,
        commit: "0123456789abcdef0123456789abcdef",
        status: "running",
        source: "local",
        composition,
        start_timestamp: 1_700_000_000_000,
        is_created_by__user: dev.id,
        is_final: true,
        semver: "1.2.3",
      },
      dev.token,
    );
    expectStatus(created, 201, "POST release");
    expect(created.body).toMatchObject({
      belongs_to__application: { __id: fleet },
      is_created_by__user: { __id: dev.id },
      commit: "0123456789abcdef0123456789abcdef",
      status: "running",
      source: "local",
      start_timestamp: "2023-11-14T22:13:20.000Z",
      composition,
    });
    const id = (created.body as { id: number }).id;
    // The CLI finishes the build with a PATCH; end_timestamp may be a number as well.
    const finished = await world.send(
      "PATCH",
      `/v6/release(${id})`,
      { status: "success", end_timestamp: 1_700_000_060_000 },
      dev.token,
    );
    expectStatus(finished, 200, "PATCH release");
    const read = await world.send(
      "GET",
      `/v6/release(${id})?$select=status,end_timestamp,composition`,
      undefined,
      dev.token,
    );
    expect(read.body).toEqual({
      d: [{ status: "success", end_timestamp: "2023-11-14T22:14:20.000Z", composition }],
    });
  });

  it("balena-sdk's test form (start_timestamp 1234, composition {}) is accepted", async () => {
    const id = await world.release(
      fleet,
      {
        is_created_by__user: dev.id,
        commit: "old-release-commit",
        status: "success",
        composition: {},
        start_timestamp: 1234,
      },
      dev.token,
    );
    const read = await world.send("GET", `/v6/release(${id})?$select=start_timestamp,composition`);
    expect(read.body).toEqual({ d: [{ start_timestamp: "1970-01-01T00:00:01.234Z", composition: {} }] });
  });

  it("without is_created_by__user, the calling user is the creator", async () => {
    const id = await world.release(fleet, { commit: "no-creator-named", status: "running" }, dev.token);
    const read = await world.send(
      "GET",
      `/v6/release(${id})?$select=is_created_by__user`,
      undefined,
      dev.token,
    );
    expect(read.body).toEqual({ d: [{ is_created_by__user: { __id: dev.id } }] });
  });

  it("a user cannot name another user as the creator: 400, nothing created", async () => {
    const refused = await world.send(
      "POST",
      "/v6/release",
      { belongs_to__application: fleet, commit: "claimed", status: "running", is_created_by__user: other.id },
      dev.token,
    );
    expect(refused.status, refused.raw).toBe(400);
    expect(refused.body).toMatch(/is_created_by__user/);
    expect(await count("commit eq 'claimed'")).toEqual({ d: 0 });
  });

  it("start_timestamp that is neither ISO 8601 nor a number is a 400 that names it", async () => {
    const refused = await world.send(
      "POST",
      "/v6/release",
      { belongs_to__application: fleet, commit: "bad-time", status: "running", start_timestamp: "yesterday" },
      dev.token,
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toMatch(/start_timestamp/);
  });
});
