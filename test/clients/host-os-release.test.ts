import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type LatestSDK, loggedSdk, sdkCalls } from "../support/sdk/balena-sdk.ts";
import { type ClientsWorld, clientsWorld, expectStatus, type User } from "../support/sdk/clients-world.ts";

// Issue 30, item 14: a fleet's class (application.is_of__class), and a device's host OS release, `should_be_operated_by__release`, as balena-sdk 23
// pins it (device.pinToOsRelease, after os.getAvailableOsVersions, which reads release.phase) and as
// open-balena-api rules it: balena.sbvr's three rules on "device should be operated by release",
// and the downgrade check of src/features/hostapp/hooks/target-hostapp.ts.

type Row = Record<string, unknown>;

const rules = {
  success:
    'It is necessary that each release that should operate a device, has a status that is equal to "success".',
  hostFleet:
    "It is necessary that each release that should operate a device, belongs to an application that is host and is for a device type that describes the device.",
  valid:
    'It is necessary that each device that should be operated by a release, should be operated by a release that is not invalidated or has a release tag that has a tag key that equals "version" and a value that is contained in an os version of the device.',
};

describe.each(databaseKinds)("a device's host OS release on %s", (kind) => {
  let world: ClientsWorld;
  let owner: User;
  let stranger: User;
  let fleet: number;
  let v7: { sdk: LatestSDK; log: ReturnType<typeof loggedSdk>["log"] };
  /** Host OS releases of the Raspberry Pi 4 host fleet, by version. */
  const os: Record<string, number> = {};
  let ownRelease: number;

  beforeAll(async () => {
    // The default limits: balena-sdk's os.getAvailableOsVersions must pass them (below).
    world = await clientsWorld(kind);
    owner = await world.user("os-owner");
    stranger = await world.user("os-stranger");
    fleet = await world.fleet("os-devices", "raspberrypi4-64", owner.token);
    // An operator's public host OS fleet for the Raspberry Pi 4 (is_host is the operator's to set),
    // in place of the one the shipped catalogue made, so the versions listed are this test's.
    const shipped = await world.send(
      "DELETE",
      `/v6/application?$filter=${encodeURIComponent("is_host eq true and is_for__device_type/slug eq 'raspberrypi4-64'")}`,
    );
    expectStatus(shipped, 200);
    const host = await world.fleet("raspberrypi4-64-os", "raspberrypi4-64");
    expectStatus(await world.send("PATCH", `/v6/application(${host})`, { is_public: true }), 200);
    await world.server.test.db.prisma.application.update({ where: { id: host }, data: { is_host: true } });
    for (const [version, extra] of [
      ["5.5.0", {}],
      ["6.0.0", {}],
      ["6.1.0", { phase: "current" }],
      ["6.2.0", { is_invalidated: true, invalidation_reason: "bricks the SD card" }],
    ] as const) {
      os[version] = await world.release(host, {
        commit: `os${version.replaceAll(".", "")}`.padEnd(32, "0"),
        status: "success",
        semver: version,
        variant: "prod",
        ...extra,
      });
    }
    os.failed = await world.release(host, {
      commit: "f".repeat(32),
      status: "failed",
      semver: "6.3.0",
      variant: "prod",
    });
    ownRelease = await world.release(fleet, { commit: "c".repeat(32), status: "success" }, owner.token);
    v7 = loggedSdk(world.server.url, "latest");
    await v7.sdk.auth.loginWithToken(owner.token);
  });
  afterAll(() => world.close());

  const device = async (report: Row = {}) => world.device(fleet, report, owner.token);
  const hostOs = async (id: number, version = "v7") =>
    (
      (
        await world.send(
          "GET",
          `/${version}/device(${id})?$select=should_be_operated_by__release`,
          undefined,
          owner.token,
        )
      ).body as { d: Row[] }
    ).d[0]?.should_be_operated_by__release;
  const patch = (id: number, release: number | null, token: string | undefined = owner.token) =>
    world.send("PATCH", `/v7/device(${id})`, { should_be_operated_by__release: release }, token);
  /** The same PATCH by the operator (the test admin), who sees every release. */
  const operatorPatch = (id: number, release: number) =>
    world.send("PATCH", `/v7/device(${id})`, { should_be_operated_by__release: release });

  it("the SDK's OS version list passes the default cost limit; a fourth unbounded level does not", async () => {
    // os.getAvailableOsVersions expands fleets' tags and releases and the releases' tags, none with
    // $top: 1,000 + 1,000,000 + 1,000 + 1,000,000 + 1,000,000,000 rows by the cost rule (README,
    // "Limits"), which the default ODATA_MAX_COST (10,000,000,000) admits.
    const sdk = loggedSdk(world.server.url, "latest");
    await sdk.sdk.auth.loginWithToken(world.server.adminKey);
    const calls = sdkCalls(sdk.log);
    const sent = await calls.requestsOf("os.getAvailableOsVersions", () =>
      sdk.sdk.models.os.getAvailableOsVersions("raspberrypi4-64"),
    );
    expect(sent.some((request) => request.includes("owns__release("))).toBe(true);
    // The limit still refuses four nested unbounded levels (1,000⁴ rows and more), through the SDK too.
    const error = (await calls.failure("organizations' fleets' devices' tags", () =>
      sdk.sdk.pine.get({
        resource: "organization",
        options: {
          $select: "id",
          $expand: { application: { $expand: { owns__device: { $expand: { device_tag: {} } } } } },
        },
      }),
    )) as Error & { statusCode?: number };
    expect(error.statusCode).toBe(400);
    expect(error.message).toContain(
      "could produce up to 1001001001000 rows, more than the limit of 10000000000 (ODATA_MAX_COST)",
    );
  });

  it("pinToOsRelease: the SDK finds the release (phase and all) and the device is pinned to it", async () => {
    const pinned = await device({ os_version: "balenaOS 6.0.0", os_variant: "prod" });
    const calls = sdkCalls(v7.log);
    const versions = await calls.call("os.getAvailableOsVersions", () =>
      v7.sdk.models.os.getAvailableOsVersions("raspberrypi4-64"),
    );
    expect(versions.map((v) => [v.raw_version, (v as { phase?: string | null }).phase ?? null])).toEqual([
      ["6.1.0+prod", "current"],
      ["6.0.0+prod", null],
      ["5.5.0+prod", null],
    ]);
    await calls.call("device.pinToOsRelease", () =>
      v7.sdk.models.device.pinToOsRelease(pinned.uuid, "6.1.0+prod"),
    );
    expect(await hostOs(pinned.id)).toEqual({ __id: os["6.1.0"] });
    // It expands like any link, and v6 has it too (as balena's v6 does).
    const [expanded] = (
      (
        await world.send(
          "GET",
          `/v7/device(${pinned.id})?$select=id&$expand=should_be_operated_by__release($select=raw_version)`,
          undefined,
          owner.token,
        )
      ).body as { d: Row[] }
    ).d;
    expect(expanded).toEqual({
      id: pinned.id,
      should_be_operated_by__release: [{ raw_version: "6.1.0+prod" }],
    });
    expect(await hostOs(pinned.id, "v6")).toEqual({ __id: os["6.1.0"] });
    // The SDK refuses a downgrade itself; the API refuses it too, in balena's words.
    const error = await calls.failure("pin to an older OS", () =>
      v7.sdk.models.device.pinToOsRelease(pinned.uuid, "5.5.0+prod"),
    );
    expect(error.message).toContain("OS downgrades are not allowed");
    const downgrade = await patch(pinned.id, os["5.5.0"] as number);
    expect([downgrade.status, downgrade.body]).toEqual([
      400,
      "Attempt to downgrade hostapp, which is not allowed",
    ]);
    // An invalidated or failed release, for a device that reports its OS: not found as a host OS release.
    for (const release of [os["6.2.0"], os.failed] as number[]) {
      const reply = await patch(pinned.id, release);
      expect([reply.status, reply.body]).toEqual([
        400,
        `Could not find a hostapp release with this ID ${release}`,
      ]);
    }
    expect(await hostOs(pinned.id)).toEqual({ __id: os["6.1.0"] });
    // Unpinning is allowed.
    expectStatus(await patch(pinned.id, null), 200);
    expect(await hostOs(pinned.id)).toBeNull();
  });

  it("balena's rules: a successful, valid release of a host fleet of the device's type", async () => {
    // A device that has not reported its OS yet: only the rules apply. The operator sees the failed
    // and the invalidated release; the owner does not (a public fleet shows only its valid, final,
    // successful releases), so for them those do not exist.
    const fresh = await device();
    const cases: [number, string][] = [
      [os.failed as number, rules.success],
      [ownRelease, rules.hostFleet],
      [os["6.2.0"] as number, rules.valid],
    ];
    for (const [release, rule] of cases) {
      const reply = await operatorPatch(fresh.id, release);
      expect([reply.status, reply.body], `release ${release}`).toEqual([400, rule]);
    }
    expect((await patch(fresh.id, ownRelease)).body).toBe(rules.hostFleet);
    for (const release of [os.failed, os["6.2.0"]] as number[]) {
      const reply = await patch(fresh.id, release);
      expect([reply.status, reply.body]).toEqual([
        400,
        `'should_be_operated_by__release' refers to release ${release}, which does not exist`,
      ]);
    }
    // A host OS fleet of another device type is not the device's.
    const other = await world.fleet("raspberrypi3-os", "raspberrypi3");
    expectStatus(await world.send("PATCH", `/v6/application(${other})`, { is_public: true }), 200);
    await world.server.test.db.prisma.application.update({ where: { id: other }, data: { is_host: true } });
    const otherOs = await world.release(other, {
      commit: "d".repeat(32),
      status: "success",
      semver: "6.1.0",
    });
    expect((await patch(fresh.id, otherOs)).body).toBe(rules.hostFleet);
    expectStatus(await patch(fresh.id, os["6.0.0"] as number), 200);
    expect(await hostOs(fresh.id)).toEqual({ __id: os["6.0.0"] });
    // The release side of the same rules: the host OS release a device should run cannot be invalidated.
    const invalidate = await world.send("PATCH", `/v7/release(${os["6.0.0"]})`, { is_invalidated: true });
    expect([invalidate.status, invalidate.body]).toEqual([400, rules.valid]);
    // A reason needs an invalidated release (balena.sbvr).
    const reason = await world.send("PATCH", `/v7/release(${os["5.5.0"]})`, { invalidation_reason: "slow" });
    expect([reason.status, reason.body]).toEqual([
      400,
      "It is necessary that each release that has an invalidation reason, is invalidated.",
    ]);
    const phase = await world.send("PATCH", `/v7/release(${os["5.5.0"]})`, { phase: "retired" });
    expect(phase.status).toBe(400);
  });

  it("application.create({applicationClass}) (balena-sdk 23) stores the fleet's class, balena's three", async () => {
    const calls = sdkCalls(v7.log);
    const block = await calls.call("create a block", () =>
      v7.sdk.models.application.create({
        name: "a-block",
        deviceType: "raspberrypi4-64",
        organization: owner.username,
        applicationClass: "block",
      }),
    );
    const read = async (id: number) =>
      (
        (await world.send("GET", `/v7/application(${id})?$select=is_of__class`, undefined, owner.token))
          .body as {
          d: Row[];
        }
      ).d[0];
    expect(await read(block.id)).toEqual({ is_of__class: "block" });
    expect(await read(fleet)).toEqual({ is_of__class: "fleet" });
    const refused = await world.send(
      "POST",
      "/v7/application",
      { app_name: "a-widget", is_for__device_type: 1, is_of__class: "widget" },
      owner.token,
    );
    expect(refused.status).toBe(400);
  });

  it("only who may write the device sets it", async () => {
    const guarded = await device();
    const refused = await patch(guarded.id, os["6.0.0"] as number, stranger.token);
    expect(refused.headers["x-affected-rows"] ?? "0").toBe("0");
    expect(await hostOs(guarded.id)).toBeNull();
  });
});
