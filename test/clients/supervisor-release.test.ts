import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type LatestSDK, loggedSdk, sdkCalls } from "../support/sdk/balena-sdk.ts";
import { type ClientsWorld, clientsWorld, expectStatus, type User } from "../support/sdk/clients-world.ts";

// Issue 30, item 14: a device's supervisor release, v7's `should_be_managed_by__release`, as
// balena-sdk 23 pins it (device.pinToSupervisorRelease, which finds the release with
// os.getSupervisorReleasesForCpuArchitecture: a release of a public, non-host
// balena_os/<arch>-supervisor fleet) and as open-balena-api rules it: balena.sbvr's two "native
// supervisor release rules", and the downgrade check of
// src/features/supervisor-app/hooks/supervisor-app.ts.

type Row = Record<string, unknown>;

const rules = {
  success:
    'It is necessary that each release that should manage a device, has a status that is equal to "success" and has a semver major that is greater than 0 or has a semver minor that is greater than 0 or has a semver patch that is greater than 0.',
  supervisorFleet:
    'It is necessary that each release that should manage a device that is of a device type1, belongs to an application that is public and is not host and has a slug that is equal to "balena_os/aarch64-supervisor" or "balena_os/amd64-supervisor" or "balena_os/armv7hf-supervisor" or "balena_os/i386-supervisor" or "balena_os/i386-nlp-supervisor" or "balena_os/rpi-supervisor" and is for a device type2 that is of a cpu architecture that is supported by the device type1.',
};

describe.each(databaseKinds)("a device's supervisor release on %s", (kind) => {
  let world: ClientsWorld;
  let owner: User;
  let stranger: User;
  let fleet: number;
  let v7: { sdk: LatestSDK; log: ReturnType<typeof loggedSdk>["log"] };
  /** Releases of the aarch64 supervisor fleet, by version. */
  const supervisors: Record<string, number> = {};
  let amd64Supervisor: number;
  let ownRelease: number;

  /** A public fleet of balena's system organization, as an operator makes one (the test admin). */
  const systemFleet = async (name: string, deviceType: string) => {
    const org = await world.send("GET", "/v6/organization?$select=id&$filter=handle eq 'balena_os'");
    const [{ id: organization }] = (org.body as { d: { id: number }[] }).d as [{ id: number }];
    const created = await world.send("POST", "/v6/application", {
      app_name: name,
      device_type: deviceType,
      organization,
    });
    expectStatus(created, 201, `POST ${name}`);
    const id = (created.body as { id: number }).id;
    expectStatus(await world.send("PATCH", `/v6/application(${id})`, { is_public: true }), 200);
    return id;
  };

  beforeAll(async () => {
    world = await clientsWorld(kind);
    owner = await world.user("sup-owner");
    stranger = await world.user("sup-stranger");
    fleet = await world.fleet("sup-devices", "raspberrypi4-64", owner.token);
    const aarch64 = await systemFleet("aarch64-supervisor", "raspberrypi4-64");
    for (const [version, extra] of [
      ["16.0.0", {}],
      ["17.0.0", {}],
      ["17.1.0", {}],
      ["17.2.0", { is_invalidated: true }],
      ["0.0.0", {}],
    ] as const) {
      supervisors[version] = await world.release(aarch64, {
        commit: `sv${version.replaceAll(".", "")}`.padEnd(32, "0"),
        status: "success",
        semver: version,
        ...extra,
      });
    }
    supervisors.failed = await world.release(aarch64, {
      commit: "f".repeat(32),
      status: "failed",
      semver: "18.0.0",
    });
    const amd64 = await systemFleet("amd64-supervisor", "intel-nuc");
    amd64Supervisor = await world.release(amd64, {
      commit: "a".repeat(32),
      status: "success",
      semver: "17.1.0",
    });
    ownRelease = await world.release(
      fleet,
      { commit: "c".repeat(32), status: "success", semver: "17.1.0" },
      owner.token,
    );
    v7 = loggedSdk(world.server.url, "latest");
    await v7.sdk.auth.loginWithToken(owner.token);
  });
  afterAll(() => world.close());

  /** A device that reports what balena-sdk requires of a device it pins (supervisor 7, balenaOS 2.12). */
  const reporting = () =>
    world.device(
      fleet,
      { supervisor_version: "17.0.0", os_version: "balenaOS 6.0.0", os_variant: "prod" },
      owner.token,
    );
  const managedBy = async (id: number, version = "v7") =>
    (
      (
        await world.send(
          "GET",
          `/${version}/device(${id})?$select=should_be_managed_by__release`,
          undefined,
          owner.token,
        )
      ).body as { d: Row[] }
    ).d[0]?.should_be_managed_by__release;
  const patch = (id: number, release: number | null, token: string | undefined = owner.token) =>
    world.send("PATCH", `/v7/device(${id})`, { should_be_managed_by__release: release }, token);
  /** The same PATCH by the operator (the test admin), who sees every release. */
  const operatorPatch = (id: number, release: number) =>
    world.send("PATCH", `/v7/device(${id})`, { should_be_managed_by__release: release });

  it("pinToSupervisorRelease: by version or id, the release of the device's architecture; no downgrade", async () => {
    const device = await reporting();
    const calls = sdkCalls(v7.log);
    const found = await calls.call("os.getSupervisorReleasesForCpuArchitecture", () =>
      v7.sdk.models.os.getSupervisorReleasesForCpuArchitecture("aarch64"),
    );
    // Successful, final, valid, above 0.0.0, newest first.
    expect(found.map((release) => release.raw_version)).toEqual(["17.1.0", "17.0.0", "16.0.0"]);
    await calls.call("device.pinToSupervisorRelease", () =>
      v7.sdk.models.device.pinToSupervisorRelease(device.uuid, "17.0.0"),
    );
    expect(await managedBy(device.id)).toEqual({ __id: supervisors["17.0.0"] });
    await calls.call("device.pinToSupervisorRelease by id", () =>
      v7.sdk.models.device.pinToSupervisorRelease(device.uuid, supervisors["17.1.0"] as number),
    );
    expect(await managedBy(device.id)).toEqual({ __id: supervisors["17.1.0"] });
    // It expands like any link, and v6 serves it too (beside its own supervisor_release link).
    const [expanded] = (
      (
        await world.send(
          "GET",
          `/v6/device(${device.id})?$select=id,should_be_managed_by__supervisor_release&$expand=should_be_managed_by__release($select=raw_version)`,
          undefined,
          owner.token,
        )
      ).body as { d: Row[] }
    ).d;
    expect(expanded).toEqual({
      id: device.id,
      should_be_managed_by__supervisor_release: null,
      should_be_managed_by__release: [{ raw_version: "17.1.0" }],
    });
    const back = (
      (
        await world.send(
          "GET",
          `/v7/release(${supervisors["17.1.0"]})?$select=id&$expand=should_manage__device($select=id)`,
          undefined,
          owner.token,
        )
      ).body as { d: Row[] }
    ).d[0];
    expect(back).toEqual({ id: supervisors["17.1.0"], should_manage__device: [{ id: device.id }] });

    // A downgrade is balena's 400, through the SDK as on the wire.
    const error = (await calls.failure("pin to an older supervisor", () =>
      v7.sdk.models.device.pinToSupervisorRelease(device.uuid, "16.0.0"),
    )) as Error & { statusCode?: number };
    expect([error.statusCode, error.message]).toEqual([
      400,
      "Request error: Attempt to downgrade supervisor, which is not allowed",
    ]);
    // A version with no supervisor release is the SDK's own "not found".
    const missing = await calls.failure("pin to a missing supervisor", () =>
      v7.sdk.models.device.pinToSupervisorRelease(device.uuid, "99.0.0"),
    );
    expect(missing.code).toBe("BalenaReleaseNotFound");
    // An invalidated release, for a device that reports its supervisor: not found (the operator sees it).
    const invalidated = await operatorPatch(device.id, supervisors["17.2.0"] as number);
    expect([invalidated.status, invalidated.body]).toEqual([
      400,
      `Could not find a supervisor release with this ID ${supervisors["17.2.0"]}`,
    ]);
    expect(await managedBy(device.id)).toEqual({ __id: supervisors["17.1.0"] });
    expectStatus(await patch(device.id, null), 200);
    expect(await managedBy(device.id)).toBeNull();
  });

  it("balena's rules: a successful release above 0.0.0 of the public supervisor fleet of the device's architecture", async () => {
    // No supervisor reported yet: balena's downgrade check does not apply, its rules do.
    const fresh = await world.device(fleet, {}, owner.token);
    const cases: [number, string][] = [
      [supervisors.failed as number, rules.success],
      [supervisors["0.0.0"] as number, rules.success],
      [ownRelease, rules.supervisorFleet],
      [amd64Supervisor, rules.supervisorFleet],
    ];
    for (const [release, rule] of cases) {
      const reply = await operatorPatch(fresh.id, release);
      expect([reply.status, reply.body], `release ${release}`).toEqual([400, rule]);
    }
    // The owner does not see the failed release of a fleet not theirs: for them it does not exist.
    expect((await patch(fresh.id, supervisors.failed as number)).body).toBe(
      `'should_be_managed_by__release' refers to release ${supervisors.failed}, which does not exist`,
    );
    expectStatus(await patch(fresh.id, supervisors["16.0.0"] as number), 200);
    expect(await managedBy(fresh.id)).toEqual({ __id: supervisors["16.0.0"] });
    // The release side of the same rules: the supervisor a device should run cannot fail.
    const fail = await world.send("PATCH", `/v7/release(${supervisors["16.0.0"]})`, { status: "failed" });
    expect([fail.status, fail.body]).toEqual([400, rules.success]);
  });

  it("only who may write the device sets it; v7 has no supervisor_release", async () => {
    const guarded = await reporting();
    const refused = await patch(guarded.id, supervisors["17.1.0"] as number, stranger.token);
    expect(refused.headers["x-affected-rows"] ?? "0").toBe("0");
    expect(await managedBy(guarded.id)).toBeNull();
    const old = await world.send(
      "GET",
      `/v7/device(${guarded.id})?$select=should_be_managed_by__supervisor_release`,
      undefined,
      owner.token,
    );
    expect(old.status).toBe(400);
    expect((await world.send("GET", "/v7/supervisor_release", undefined, owner.token)).status).toBe(404);
    expect((await world.send("GET", "/v6/supervisor_release", undefined, owner.token)).status).toBe(200);
  });
});
