import type { BalenaSDK } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PrismaClient } from "../../src/generated/prisma/client.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { type Exchange, loggedSdk } from "../support/balena-sdk.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// Acceptance (issue 5): balena-sdk 19.7.3, the last SDK on /v6/, logged in as a normal member of
// the demo organization, against the real listener. Every effect of an SDK call is checked with
// Prisma, never through the OData API. Every request the SDK sends is logged with the server's
// answer, and a failing call reports that log, so a failure names the exact request.

describe.each(databaseKinds)("balena-sdk 19.7.3 as an organization member on %s", (kind) => {
  let server: TestServer;
  let sdk: BalenaSDK;
  let log: Exchange[];
  let p: PrismaClient;
  let member: { id: number; actor: number; username: string; email: string };
  let fleets: Record<"lights" | "weather" | "kiosks", { id: number; slug: string }>;
  let orgId: number;

  /** Runs one SDK call; on failure the error carries every request it sent and the answers. */
  async function call<T>(what: string, work: () => Promise<T>): Promise<T> {
    const from = log.length;
    try {
      return await work();
    } catch (error) {
      const exchanges = log
        .slice(from)
        .map((e) => `  ${e.request}\n    → ${e.response ?? "(no answer)"}`)
        .join("\n");
      throw new Error(`${what} failed: ${(error as Error).message}\nrequests:\n${exchanges || "  (none)"}`, {
        cause: error,
      });
    }
  }

  /** The requests a call sent, for the assertions that name them. */
  async function requestsOf(work: () => Promise<unknown>, what: string): Promise<string[]> {
    const from = log.length;
    await call(what, work);
    return log.slice(from).map((e) => e.request);
  }

  const deviceOf = async (fleetId: number, index = 0) => {
    const devices = await p.device.findMany({
      where: { belongs_to__application: fleetId },
      orderBy: { id: "asc" },
    });
    const device = devices[index];
    if (!device) throw new Error(`fleet ${fleetId} has no device ${index}`);
    return device;
  };

  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    p = server.test.db.prisma;
    const fleet = (slug: string) => p.application.findUniqueOrThrow({ where: { slug } });
    fleets = {
      lights: await fleet("demo/smart-lights"),
      weather: await fleet("demo/weather-stations"),
      kiosks: await fleet("demo/kiosks"),
    };
    orgId = (await p.organization.findUniqueOrThrow({ where: { handle: "demo" } })).id;

    // A normal user, created through the API by the admin, and made a member of the demo organization.
    const credentials = {
      username: "sdk-member",
      email: "sdk-member@example.com",
      password: "sdk-member-pw-1",
    };
    const created = await server.app.inject({ method: "POST", url: "/v6/user", payload: credentials });
    expect(created.statusCode, `POST /v6/user: ${created.body}`).toBe(201);
    const user = await p.user.findUniqueOrThrow({ where: { username: credentials.username } });
    expect(user.is_admin).toBe(false);
    member = { id: user.id, actor: user.actor, username: user.username, email: user.email };
    const membership = await server.app.inject({
      method: "POST",
      url: "/v6/organization_membership",
      payload: { user: user.id, is_member_of__organization: orgId, role: "member" },
    });
    expect(membership.statusCode, `POST /v6/organization_membership: ${membership.body}`).toBe(201);

    const login = await fetch(`${server.url}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: credentials.username, password: credentials.password }),
    });
    const jwt = await login.text();
    expect(login.status, `POST /login_: ${jwt}`).toBe(200);

    ({ sdk, log } = loggedSdk(server.url));
    await call("auth.loginWithToken", () => sdk.auth.loginWithToken(jwt));
  });
  afterAll(async () => {
    await server?.close();
  });

  // ---- auth --------------------------------------------------------------------------------------
  it("auth.loginWithToken sends nothing; auth.whoami answers the member", async () => {
    expect(log.map((e) => e.request)).toEqual([]);
    const whoami = await call("auth.whoami", () => sdk.auth.whoami());
    expect(whoami).toEqual({
      id: member.actor,
      actorType: "user",
      actorTypeId: member.id,
      username: member.username,
      email: member.email,
    });
    expect(await call("auth.isLoggedIn", () => sdk.auth.isLoggedIn())).toBe(true);
    expect(await call("auth.getUserInfo", () => sdk.auth.getUserInfo())).toEqual({
      id: member.id,
      actor: member.actor,
      username: member.username,
      email: member.email,
    });
  });

  // ---- device ------------------------------------------------------------------------------------
  describe("models.device", () => {
    it("get(uuid), get(short uuid), get(id) and get with options return the device", async () => {
      const device = await deviceOf(fleets.lights.id);
      const byUuid = await call("device.get(uuid)", () => sdk.models.device.get(device.uuid));
      expect(byUuid).toMatchObject({
        id: device.id,
        uuid: device.uuid,
        device_name: device.device_name,
        belongs_to__application: { __id: fleets.lights.id },
      });
      const byShortUuid = await call("device.get(short uuid)", () =>
        sdk.models.device.get(device.uuid.slice(0, 7)),
      );
      expect(byShortUuid.id).toBe(device.id);
      const byId = await call("device.get(id)", () => sdk.models.device.get(device.id));
      expect(byId.uuid).toBe(device.uuid);
      const selected = await call("device.get(uuid, {$select, $expand})", () =>
        sdk.models.device.get(device.uuid, {
          $select: ["id", "device_name"],
          $expand: { belongs_to__application: { $select: "slug" } },
        }),
      );
      expect(selected).toEqual({
        id: device.id,
        device_name: device.device_name,
        belongs_to__application: [{ slug: fleets.lights.slug }],
      });
    });

    it("rename(uuid, name) changes device_name", async () => {
      const device = await deviceOf(fleets.lights.id);
      const name = "renamed by the sdk / 1 & 'q'";
      await call("device.rename", () => sdk.models.device.rename(device.uuid, name));
      expect((await p.device.findUniqueOrThrow({ where: { id: device.id } })).device_name).toBe(name);
      // Nothing else moved.
      const others = await p.device.count({ where: { device_name: name } });
      expect(others).toBe(1);
    });

    it("setNote(uuid, note) changes note", async () => {
      const device = await deviceOf(fleets.lights.id, 1);
      const note = "noted by the sdk: 100% fine";
      await call("device.setNote", () => sdk.models.device.setNote(device.uuid, note));
      expect((await p.device.findUniqueOrThrow({ where: { id: device.id } })).note).toBe(note);
    });

    it("pinToRelease(uuid, commit) pins the device; trackApplicationRelease(uuid) unpins it", async () => {
      const device = await deviceOf(fleets.lights.id, 2);
      const releases = await p.release.findMany({
        where: { belongs_to__application: fleets.lights.id, status: "success" },
        orderBy: { created_at: "asc" },
      });
      const oldest = releases[0];
      if (!oldest) throw new Error("the demo fleet has no successful release");
      const fleet = await p.application.findUniqueOrThrow({ where: { id: fleets.lights.id } });
      expect(oldest.id).not.toBe(fleet.should_be_running__release);

      const pinned = await requestsOf(
        () => sdk.models.device.pinToRelease(device.uuid, oldest.commit),
        "device.pinToRelease",
      );
      expect(pinned.at(-1)).toMatch(/^PATCH .*\/v6\/device\?.* \{"should_be_running__release":\d+\}$/);
      expect(
        (await p.device.findUniqueOrThrow({ where: { id: device.id } })).should_be_running__release,
      ).toBe(oldest.id);

      await call("device.trackApplicationRelease", () =>
        sdk.models.device.trackApplicationRelease(device.uuid),
      );
      expect(
        (await p.device.findUniqueOrThrow({ where: { id: device.id } })).should_be_running__release,
      ).toBeNull();
    });
  });

  // ---- application -------------------------------------------------------------------------------
  describe("models.application", () => {
    let created: { id: number; slug: string };

    it("create({name, deviceType, organization}) creates a fleet of the member's organization", async () => {
      const app = await call("application.create", () =>
        sdk.models.application.create({
          name: "sdk-fleet",
          deviceType: "raspberrypi4-64",
          organization: "demo",
        }),
      );
      const row = await p.application.findUniqueOrThrow({ where: { id: app.id } });
      const deviceType = await p.deviceType.findUniqueOrThrow({ where: { slug: "raspberrypi4-64" } });
      expect(row).toMatchObject({
        app_name: "sdk-fleet",
        slug: "demo/sdk-fleet",
        organization: orgId,
        is_for__device_type: deviceType.id,
      });
      expect(app).toMatchObject({
        id: row.id,
        app_name: "sdk-fleet",
        slug: "demo/sdk-fleet",
        organization: { __id: orgId },
        is_for__device_type: { __id: deviceType.id },
      });
      created = { id: row.id, slug: row.slug };

      // The organization may also be named by id.
      const byId = await call("application.create (organization id)", () =>
        sdk.models.application.create({
          name: "sdk-fleet-2",
          deviceType: "raspberrypi4-64",
          organization: orgId,
        }),
      );
      expect(await p.application.findUniqueOrThrow({ where: { id: byId.id } })).toMatchObject({
        slug: "demo/sdk-fleet-2",
        organization: orgId,
      });
    });

    it("get(id) returns the fleet", async () => {
      const byId = await call("application.get(id)", () => sdk.models.application.get(created.id));
      expect(byId).toMatchObject({ id: created.id, slug: created.slug, app_name: "sdk-fleet" });
      const demo = await call("application.get(id)", () => sdk.models.application.get(fleets.weather.id));
      expect(demo).toMatchObject({ id: fleets.weather.id, slug: fleets.weather.slug });
    });

    it("get(slug) returns the fleet, whatever the slug's case", async () => {
      const bySlug = await call("application.get(slug)", () => sdk.models.application.get(created.slug));
      expect(bySlug).toMatchObject({ id: created.id, slug: created.slug, app_name: "sdk-fleet" });
      const upper = await call("application.get(SLUG)", () =>
        sdk.models.application.get(created.slug.toUpperCase()),
      );
      expect(upper.id).toBe(created.id);
    });

    it("getAll returns the fleets the member can see, by app_name", async () => {
      const all = await call("application.getAll", () => sdk.models.application.getAll());
      const expected = await p.application.findMany({
        where: { OR: [{ organization: orgId }, { is_public: true }] },
        orderBy: { app_name: "asc" },
      });
      expect(all.map((a) => a.id)).toEqual(expected.map((a) => a.id));
      expect(all.map((a) => a.slug)).toEqual(
        expect.arrayContaining([
          "demo/kiosks",
          "demo/smart-lights",
          "demo/weather-stations",
          "demo/sdk-fleet",
        ]),
      );
    });

    /** Pins a demo fleet to its oldest successful release; returns the release it should then track. */
    async function pinFleetToOldest(fleetId: number) {
      const oldest = await p.release.findFirstOrThrow({
        where: { belongs_to__application: fleetId, status: "success" },
        orderBy: { created_at: "asc" },
      });
      // Directly in the database: this set-up is not an SDK call under test.
      await p.application.update({
        where: { id: fleetId },
        data: { should_track_latest_release: false, should_be_running__release: oldest.id },
      });
      const latest = await p.release.findFirstOrThrow({
        where: {
          belongs_to__application: fleetId,
          status: "success",
          is_final: true,
          is_invalidated: false,
          is_passing_tests: true,
        },
        orderBy: { created_at: "desc" },
      });
      expect(latest.id).not.toBe(oldest.id);
      return latest;
    }

    it("trackLatestRelease(id) tracks and targets the newest successful final release", async () => {
      const latest = await pinFleetToOldest(fleets.weather.id);
      await call("application.trackLatestRelease(id)", () =>
        sdk.models.application.trackLatestRelease(fleets.weather.id),
      );
      const fleet = await p.application.findUniqueOrThrow({ where: { id: fleets.weather.id } });
      expect(fleet.should_track_latest_release).toBe(true);
      expect(fleet.should_be_running__release).toBe(latest.id);
    });

    it("trackLatestRelease(slug) tracks and targets the newest successful final release", async () => {
      const latest = await pinFleetToOldest(fleets.lights.id);
      await call("application.trackLatestRelease(slug)", () =>
        sdk.models.application.trackLatestRelease(fleets.lights.slug),
      );
      const fleet = await p.application.findUniqueOrThrow({ where: { id: fleets.lights.id } });
      expect(fleet.should_track_latest_release).toBe(true);
      expect(fleet.should_be_running__release).toBe(latest.id);
    });
  });

  // ---- device moves and removals (after the aarch64 fleet exists) ----------------------------------
  describe("models.device (move, remove)", () => {
    it("move(uuid, id) changes the fleet to another aarch64 fleet", async () => {
      const target = await p.application.findUniqueOrThrow({ where: { slug: "demo/sdk-fleet" } });
      const device = await deviceOf(fleets.lights.id, 3);
      await call("device.move(uuid, id)", () => sdk.models.device.move(device.uuid, target.id));
      expect((await p.device.findUniqueOrThrow({ where: { id: device.id } })).belongs_to__application).toBe(
        target.id,
      );
    });

    it("move(uuid, slug) changes the fleet to another aarch64 fleet", async () => {
      const target = await p.application.findUniqueOrThrow({ where: { slug: "demo/sdk-fleet" } });
      const device = await deviceOf(fleets.lights.id, 5);
      await call("device.move(uuid, slug)", () => sdk.models.device.move(device.uuid, target.slug));
      expect((await p.device.findUniqueOrThrow({ where: { id: device.id } })).belongs_to__application).toBe(
        target.id,
      );
    });

    it("move to a fleet of another architecture is refused (BalenaInvalidDeviceType) and changes nothing", async () => {
      const device = await deviceOf(fleets.lights.id, 4);
      let caught: unknown;
      try {
        await sdk.models.device.move(device.uuid, fleets.kiosks.id);
      } catch (error) {
        caught = error;
      }
      expect((caught as { code?: string } | undefined)?.code, String(caught)).toBe("BalenaInvalidDeviceType");
      expect((await p.device.findUniqueOrThrow({ where: { id: device.id } })).belongs_to__application).toBe(
        fleets.lights.id,
      );
    });

    it("remove(uuid) and remove(id) delete the devices", async () => {
      const first = await deviceOf(fleets.weather.id, 0);
      const second = await deviceOf(fleets.weather.id, 1);
      const before = await p.device.count();
      await call("device.remove(uuid)", () => sdk.models.device.remove(first.uuid));
      expect(await p.device.findUnique({ where: { id: first.id } })).toBeNull();
      await call("device.remove(id)", () => sdk.models.device.remove(second.id));
      expect(await p.device.findUnique({ where: { id: second.id } })).toBeNull();
      expect(await p.device.count()).toBe(before - 2);
    });
  });

  describe("models.application (remove)", () => {
    it("remove(id) deletes the fleet", async () => {
      const fleet = await p.application.findUniqueOrThrow({ where: { slug: "demo/sdk-fleet-2" } });
      await call("application.remove(id)", () => sdk.models.application.remove(fleet.id));
      expect(await p.application.findUnique({ where: { id: fleet.id } })).toBeNull();
    });

    it("remove(slug) deletes the fleet and its devices", async () => {
      const fleet = await p.application.findUniqueOrThrow({ where: { slug: "demo/sdk-fleet" } });
      await call("application.remove(slug)", () => sdk.models.application.remove(fleet.slug));
      expect(await p.application.findUnique({ where: { id: fleet.id } })).toBeNull();
      expect(await p.device.count({ where: { belongs_to__application: fleet.id } })).toBe(0);
    });

    it("the demo fleets are untouched", async () => {
      for (const fleet of Object.values(fleets))
        expect(await p.application.findUnique({ where: { id: fleet.id } }), fleet.slug).not.toBeNull();
    });
  });

  it("the SDK only called endpoints the server serves", () => {
    const paths = [
      ...new Set(log.map((e) => e.request.replace(/^(\S+) https?:\/\/[^/]+(\/[^?( ]*).*$/, "$1 $2"))),
    ];
    const unanswered = log.filter((e) => e.response?.startsWith("404")).map((e) => e.request);
    expect(unanswered, `paths called: ${paths.join(", ")}`).toEqual([]);
  });
});
