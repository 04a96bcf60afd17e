import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type ClientsWorld, clientsWorld, expectStatus } from "../support/sdk/clients-world.ts";

// Issue 19: naming a fleet's target release leaves `should_track_latest_release` as it is unless
// the request sets it, as balena does (open-balena-api has no rule that switches tracking off).
// balena-sdk 19 (v6) pins with `{"should_be_running__release": id}` alone; balena-sdk 20+ sends
// `{"should_be_running__release": id, "should_track_latest_release": false}`.

describe.each(databaseKinds)("pinning a fleet on %s", (kind) => {
  let world: ClientsWorld;
  let seq = 0;

  beforeAll(async () => {
    world = await clientsWorld(kind);
  });
  afterAll(() => world.close());

  const release = (fleet: number) =>
    world.release(fleet, { commit: `c0mmit${String(++seq).padStart(26, "0")}`, status: "success" });
  const state = async (fleet: number) =>
    (
      (
        await world.send(
          "GET",
          `/v6/application(${fleet})?$select=should_track_latest_release,should_be_running__release`,
        )
      ).body as { d: unknown[] }
    ).d[0];

  it("balena-sdk 19's pin keeps tracking on; the next release moves the fleet on", async () => {
    const fleet = await world.fleet("tracking-fleet", "raspberrypi4-64");
    const first = await release(fleet);
    const second = await release(fleet);
    expect(await state(fleet)).toEqual({
      should_track_latest_release: true,
      should_be_running__release: { __id: second },
    });
    expectStatus(
      await world.send("PATCH", `/v6/application(${fleet})`, { should_be_running__release: first }),
      200,
    );
    expect(await state(fleet)).toEqual({
      should_track_latest_release: true,
      should_be_running__release: { __id: first },
    });
    const third = await release(fleet);
    expect(await state(fleet)).toEqual({
      should_track_latest_release: true,
      should_be_running__release: { __id: third },
    });
  });

  it("a pin that switches tracking off in the same request holds across new releases", async () => {
    const fleet = await world.fleet("pinned-fleet", "raspberrypi4-64");
    const first = await release(fleet);
    await release(fleet);
    const pinned = await world.send("PATCH", `/v6/application(${fleet})`, {
      should_be_running__release: first,
      should_track_latest_release: false,
    });
    expectStatus(pinned, 200, "pin");
    await release(fleet);
    expect(await state(fleet)).toEqual({
      should_track_latest_release: false,
      should_be_running__release: { __id: first },
    });
    // Tracking again (balena-sdk's trackLatestRelease) moves it to the newest release at once.
    expectStatus(
      await world.send("PATCH", `/v6/application(${fleet})`, { should_track_latest_release: true }),
      200,
    );
    const newest = (await state(fleet)) as { should_be_running__release: { __id: number } };
    expect(newest.should_be_running__release.__id).toBeGreaterThan(first);
  });

  it("a fleet that does not track stays untracked when its target changes", async () => {
    const fleet = await world.fleet("manual-fleet", "raspberrypi4-64");
    const first = await release(fleet);
    expectStatus(
      await world.send("PATCH", `/v6/application(${fleet})`, { should_track_latest_release: false }),
      200,
    );
    const second = await release(fleet);
    expectStatus(
      await world.send("PATCH", `/v6/application(${fleet})`, { should_be_running__release: second }),
      200,
    );
    expect(await state(fleet)).toEqual({
      should_track_latest_release: false,
      should_be_running__release: { __id: second },
    });
    expectStatus(
      await world.send("PATCH", `/v6/application(${fleet})`, { should_be_running__release: first }),
      200,
    );
    expect(await state(fleet)).toEqual({
      should_track_latest_release: false,
      should_be_running__release: { __id: first },
    });
  });

  it("naming the target by commit leaves tracking as it is too", async () => {
    const fleet = await world.fleet("commit-fleet", "raspberrypi4-64");
    const first = await release(fleet);
    await release(fleet);
    const commit = `c0mmit${String(seq - 1).padStart(26, "0")}`;
    expectStatus(await world.send("PATCH", `/v6/application(${fleet})`, { commit }), 200);
    expect(await state(fleet)).toEqual({
      should_track_latest_release: true,
      should_be_running__release: { __id: first },
    });
  });
});
