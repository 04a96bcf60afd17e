import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type ClientsWorld, clientsWorld, expectStatus } from "../support/sdk/clients-world.ts";

// Issue 19: balena keeps a commit unique among a fleet's *successful* releases only (open-balena-api
// src/balena.sbvr), so a failed build and its rebuild of the same commit coexist. Every lookup by
// commit chooses the same release: the successful one, else the newest.

const oneSuccessPerCommit =
  'It is necessary that each application that owns a release1 that has a status that is equal to "success" and has a commit1, owns at most one release2 that has a status that is equal to "success" and has a commit2 that is equal to the commit1.';

describe.each(databaseKinds)("releases sharing a commit on %s", (kind) => {
  let world: ClientsWorld;
  let fleet: number;
  let failed: number;
  let rebuilt: number;
  const commit = "feedfacefeedfacefeedfacefeedface";

  beforeAll(async () => {
    world = await clientsWorld(kind);
    fleet = await world.fleet("rebuilds", "raspberrypi4-64");
    failed = await world.release(fleet, { commit, status: "failed" });
  });
  afterAll(() => world.close());

  it("a rebuild of a failed commit is created beside it", async () => {
    // The CLI creates the rebuild as running and PATCHes it to success.
    rebuilt = await world.release(fleet, { commit, status: "running", start_timestamp: Date.now() });
    expectStatus(await world.send("PATCH", `/v6/release(${rebuilt})`, { status: "success" }), 200);
    const both = await world.send(
      "GET",
      `/v6/release?$select=id,status&$filter=commit eq '${commit}'&$orderby=id asc`,
    );
    expect(both.body).toEqual({
      d: [
        { id: failed, status: "failed" },
        { id: rebuilt, status: "success" },
      ],
    });
  });

  it("a second successful release of the commit is refused with balena's rule, by POST or PATCH", async () => {
    const posted = await world.send("POST", "/v6/release", {
      belongs_to__application: fleet,
      commit,
      status: "success",
    });
    expect([posted.status, posted.body]).toEqual([400, oneSuccessPerCommit]);
    const patched = await world.send("PATCH", `/v6/release(${failed})`, { status: "success" });
    expect([patched.status, patched.body]).toEqual([400, oneSuccessPerCommit]);
    const statuses = await world.send("GET", `/v6/release?$select=status&$filter=commit eq '${commit}'`);
    expect((statuses.body as { d: unknown[] }).d).toHaveLength(2);
  });

  it("two failed builds of one commit may not both become successful in one bulk PATCH", async () => {
    const again = "0ddba11c0ddba11c0ddba11c0ddba11c";
    const first = await world.release(fleet, { commit: again, status: "failed" });
    const second = await world.release(fleet, { commit: again, status: "failed" });
    const bulk = await world.send("PATCH", `/v6/release?$filter=id in (${first}, ${second})`, {
      status: "success",
    });
    expect([bulk.status, bulk.body]).toEqual([400, oneSuccessPerCommit]);
  });

  it("the same commit in another fleet is no conflict", async () => {
    const elsewhere = await world.fleet("rebuilds-too", "raspberrypi4-64");
    await world.release(elsewhere, { commit, status: "success" });
  });

  it("a fleet's target by commit is its successful release with that commit", async () => {
    const pinned = await world.send("PATCH", `/v6/application(${fleet})`, { commit });
    expectStatus(pinned, 200, "PATCH application commit");
    const read = await world.send(
      "GET",
      `/v6/application(${fleet})?$select=commit,should_be_running__release`,
    );
    expect(read.body).toEqual({ d: [{ commit, should_be_running__release: { __id: rebuilt } }] });
  });

  it("a device reporting the commit runs the successful release", async () => {
    const registered = await world.send("POST", "/device/register", {
      application: fleet,
      uuid: "c0ffee00c0ffee00c0ffee00c0ffee00",
    });
    expectStatus(registered, 201, "register");
    const { api_key: key } = registered.body as { api_key: string };
    const reported = await world.send(
      "PATCH",
      "/device/v2/c0ffee00c0ffee00c0ffee00c0ffee00/state",
      { commit, status: "Idle" },
      key,
    );
    expectStatus(reported, 200, "state report");
    const device = await world.send(
      "GET",
      "/v6/device?$select=is_running__release&$filter=uuid eq 'c0ffee00c0ffee00c0ffee00c0ffee00'",
    );
    expect(device.body).toEqual({ d: [{ is_running__release: { __id: rebuilt } }] });
  });
});
