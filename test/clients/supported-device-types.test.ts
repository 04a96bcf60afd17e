import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultCatalogue, loadDefaultCatalogue } from "../../src/catalogue/defaults.ts";
import { importCatalogue } from "../../src/catalogue/import.ts";
import { databaseKinds } from "../support/databases.ts";
import { type Exchange, type LatestSDK, loggedSdk } from "../support/sdk/balena-sdk.ts";
import {
  type ClientsWorld,
  clientsWorld,
  expectStatus,
  type User,
  uuid,
} from "../support/sdk/clients-world.ts";

// Issue 30, item 11: balena-sdk's deviceType.getAllSupported (and the CLI's list of supported device
// types) finds a device type through its host OS fleet: `is_host`, not archived, the device type's
// `is_default_for__application`, with a final, successful, valid release. The shipped catalogue has
// one per device type, readable by whoever may list the device type and nothing more; and every
// shipped contract carries the partials balenaOS' install steps interpolate.

const SUPPORTED =
  "is_default_for__application/any(idfa:(idfa/is_host eq true) and (idfa/is_archived eq false) and " +
  "(idfa/owns__release/any(r:(r/status eq 'success') and (r/is_final eq true) and (r/is_invalidated eq false))))";
const SUPPORTED_FILTER = `$filter=${SUPPORTED}`;

type Sdk = { sdk: LatestSDK; log: Exchange[] };
const lines = {
  "balena-sdk 19.7.3": (url: string) => loggedSdk(url) as unknown as Sdk,
  "balena-sdk latest": (url: string) => loggedSdk(url, "latest"),
};

describe.each(databaseKinds)("supported device types on %s", (kind) => {
  let world: ClientsWorld;
  let alice: User;
  let shipped: { slug: string; name: string; state: string }[];

  beforeAll(async () => {
    world = await clientsWorld(kind);
    alice = await world.user("dt-alice");
    shipped = (await defaultCatalogue()).map(({ slug, name, state }) => ({ slug, name, state }));
  });
  afterAll(() => world?.close());

  // Every shipped device type but the discontinued ones (the order, by name, is the database's collation's).
  const supportedSlugs = () =>
    shipped
      .filter((entry) => entry.state !== "DISCONTINUED")
      .map((entry) => entry.slug)
      .sort();
  const slugsOf = (rows: readonly { slug: string }[]) => rows.map((row) => row.slug).sort();

  describe.each(Object.entries(lines))("%s", (_line, make) => {
    it("getAllSupported lists every shipped device type that is not discontinued, logged in or not", async () => {
      const member = make(world.server.url);
      await member.sdk.auth.loginWithToken(alice.token);
      const types = await member.sdk.models.deviceType.getAllSupported({ $select: ["slug", "name"] });
      const request = decodeURIComponent(member.log.at(-1)?.request ?? "");
      expect(request).toContain("is_default_for__application/any(idfa:");
      expect(request).toContain("idfa/is_host eq true");
      expect(slugsOf(types)).toEqual(supportedSlugs());
      expect(slugsOf(types)).not.toContain("intel-edison");
      // The CLI's `balena device-type list` is the same call, and so is a guest's.
      const guest = make(world.server.url);
      const guestTypes = await guest.sdk.models.deviceType.getAllSupported({ $select: "slug" });
      expect(slugsOf(guestTypes)).toEqual(supportedSlugs());
    });

    it("every shipped contract gives balenaOS' install steps all the partials they name", async () => {
      const member = make(world.server.url);
      await member.sdk.auth.loginWithToken(alice.token);
      for (const { slug, name } of shipped) {
        const method = await member.sdk.models.deviceType.getInstallMethod(slug);
        const partials = (await member.sdk.models.deviceType.getInterpolatedPartials(slug)).partials ?? {};
        const needed = {
          image: ["instructions"],
          externalBoot: ["bootDevice"],
          externalFlash: ["bootDeviceExternal", "flashIndicator", "bootDevice"],
          // balena's jetson-flash step names no partial (the Jetson Nano, as balena's contract has it).
          jetsonFlash: [],
        }[method as string];
        expect(needed, `${slug}: install method ${method}`).toBeDefined();
        for (const partial of needed ?? []) expect(partials, `${slug}: ${partial}`).toHaveProperty(partial);
        // Interpolated: no template is left, and the device type's name is in it.
        expect(JSON.stringify(partials), slug).not.toMatch(/\{\{|undefined/);
        const steps = (await member.sdk.models.deviceType.getInstructions(slug)) as unknown as string[];
        expect(Array.isArray(steps) && steps.length > 0, `${slug} steps`).toBe(true);
        for (const step of steps) {
          expect(step, `${slug}: ${steps.join(" | ")}`).not.toMatch(/^(to boot|\.)|\{\{|undefined/i);
        }
        if (method !== "image" && method !== "jetsonFlash")
          expect(steps.at(-1), slug).toBe(
            `${method === "externalFlash" ? "Power up" : "Connect power to"} the ${name} to boot the device.`,
          );
      }
    });
  });

  it("a device key and a provisioning key list them too; hidden is everything of the host fleets but their row and release", async () => {
    const fleet = await world.fleet("dt-keys", "raspberrypi4-64", alice.token);
    const registered = await world.send(
      "POST",
      "/device/register",
      { application: fleet, uuid: uuid() },
      alice.token,
    );
    expectStatus(registered, 201, "register");
    const deviceKey = (registered.body as { api_key: string }).api_key;
    const provisioning = await world.send(
      "POST",
      `/api-key/application/${fleet}/provisioning`,
      {},
      alice.token,
    );
    expectStatus(provisioning, 200, "provisioning key");
    const url = `/v6/device_type?$select=slug&$orderby=name asc&${SUPPORTED_FILTER}`;
    for (const token of [deviceKey, provisioning.body as string, alice.token]) {
      const reply = await world.send("GET", url, undefined, token);
      expectStatus(reply, 200, url);
      expect(slugsOf((reply.body as { d: { slug: string }[] }).d)).toEqual(supportedSlugs());
    }
    // The host fleets are public fleets of the system organization: their rows and their one
    // release, nothing else (no organization, devices, variables or keys).
    const hosts = await world.send(
      "GET",
      "/v6/application?$select=slug,is_public,is_archived&$filter=is_host eq true&$orderby=slug asc" +
        "&$expand=owns__release($select=semver,status,is_final),owns__device/$count,organization($select=handle)",
      undefined,
      alice.token,
    );
    expectStatus(hosts, 200, "host fleets");
    const rows = (hosts.body as { d: Record<string, unknown>[] }).d;
    expect(rows).toHaveLength(shipped.length);
    expect(rows.find((row) => row.slug === "balena_os/raspberrypi4-64")).toEqual({
      slug: "balena_os/raspberrypi4-64",
      is_public: true,
      is_archived: false,
      owns__release: [{ semver: "6.0.13", status: "success", is_final: true }],
      owns__device: 0,
      organization: [],
    });
    expect(rows.find((row) => row.slug === "balena_os/intel-edison")).toMatchObject({ is_archived: true });
    const organization = await world.send(
      "GET",
      "/v6/organization?$filter=handle eq 'balena_os'",
      undefined,
      alice.token,
    );
    expect(organization.body).toEqual({ d: [] });
    // As in balena: getAll lists them among the public fleets, the member's own fleets are without them.
    const sdk = loggedSdk(world.server.url);
    await sdk.sdk.auth.loginWithToken(alice.token);
    const own = await sdk.sdk.models.application.getAllDirectlyAccessible({ $select: "slug" });
    expect(own.map((app) => app.slug)).toEqual([`${alice.username}/dt-keys`]);
    expect(await sdk.sdk.models.application.getAll({ $select: "slug" })).toHaveLength(shipped.length + 1);
  });

  it("a private device type's host fleet is for those who may read the device type (admins)", async () => {
    const [pi] = (await defaultCatalogue()).filter((entry) => entry.slug === "raspberrypi4-64");
    await importCatalogue(world.server.test.db, [
      { ...pi, slug: "secret-board", aliases: ["secret-board"], name: "Secret board", private: true },
    ]);
    const userSdk = loggedSdk(world.server.url);
    await userSdk.sdk.auth.loginWithToken(alice.token);
    const forUser = await userSdk.sdk.models.deviceType.getAllSupported({ $select: "slug" });
    expect(forUser.map((type) => type.slug)).not.toContain("secret-board");
    const hidden = await world.send(
      "GET",
      "/v6/application?$filter=slug eq 'balena_os/secret-board'",
      undefined,
      alice.token,
    );
    expect(hidden.body).toEqual({ d: [] });
    // The test admin's key (the default of `send`) sees it.
    const forAdmin = await world.send(
      "GET",
      `/v6/device_type?$select=slug&$filter=slug eq 'secret-board' and ${SUPPORTED}`,
    );
    expectStatus(forAdmin, 200, "admin");
    expect(forAdmin.body).toEqual({ d: [{ slug: "secret-board" }] });
  });

  it("a device type deleted goes with its host fleet; an older database gets its host fleets once", async () => {
    const deleted = await world.send("DELETE", "/v6/device_type?$filter=slug eq 'secret-board'");
    expectStatus(deleted, 200, "delete");
    const gone = await world.send(
      "GET",
      "/v6/application/$count?$filter=is_for__device_type/slug eq 'secret-board'",
    );
    expect(gone.body).toEqual({ d: 0 });
    // A database the first edition of the catalogue loaded: no host fleets yet.
    const db = world.server.test.db;
    await db.query({ text: `DELETE FROM "application" WHERE "is_host"`, values: [] });
    await db.query({
      text: `UPDATE "setting" SET "value" = '1' WHERE "name" = 'default_catalogue'`,
      values: [],
    });
    expect(await loadDefaultCatalogue(db)).toBe(0);
    const count = await world.send("GET", "/v6/application/$count?$filter=is_host eq true");
    expect(count.body).toEqual({ d: shipped.length });
    // And only once.
    await loadDefaultCatalogue(db);
    expect((await world.send("GET", "/v6/application/$count?$filter=is_host eq true")).body).toEqual({
      d: shipped.length,
    });
  });
});
