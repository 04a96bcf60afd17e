import type { BalenaSDK } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { graphql } from "../support/graphql/graphql.ts";
import { type Exchange, loggedSdk } from "../support/sdk/balena-sdk.ts";
import {
  type ClientsWorld,
  clientsWorld,
  expectStatus,
  type User,
  uuid,
} from "../support/sdk/clients-world.ts";

// Issue 19: the rest of the model balena-sdk 19.7.3 reads: device.overall_progress,
// application.is_host and is_archived, device_type.contract and api_key.is_of__actor as a link.

type Row = Record<string, unknown>;

describe.each(databaseKinds)("balena-sdk's model fields on %s", (kind) => {
  let world: ClientsWorld;
  let alice: User;
  let sdk: BalenaSDK;
  let log: Exchange[];
  let fleet: number;

  const get = async (url: string, token?: string) => {
    const reply = await world.send("GET", url, undefined, token);
    expectStatus(reply, 200, `GET ${url}`);
    expect(reply.headers["x-sql-statements"], url).toBe("1");
    return (reply.body as { d: Row[] }).d;
  };
  const lastRequest = () => log.at(-1)?.request.replace(world.server.url, "");

  beforeAll(async () => {
    world = await clientsWorld(kind);
    alice = await world.user("alice");
    fleet = await world.fleet("things", "raspberrypi4-64", alice.token);
    ({ sdk, log } = loggedSdk(world.server.url));
    await sdk.auth.loginWithToken(alice.token);
  });
  afterAll(() => world?.close());

  describe("device.overall_progress", () => {
    it("is the provisioning progress while configuring, the download progress while updating", async () => {
      const device = async (report: Row) =>
        (await world.device(fleet, { uuid: uuid(), ...report }, alice.token)).uuid;
      // Online with no heartbeat and nothing in progress: no progress (an idle device).
      const provisioning = await device({
        is_online: true,
        provisioning_progress: 40,
        provisioning_state: "Booting",
      });
      const updating = await device({ is_online: true, download_progress: 70, status: "Downloading" });
      const idle = await device({ is_online: true });
      expect(await sdk.models.device.getProgress(provisioning)).toBe(40);
      expect(lastRequest()).toBe(`GET /v6/device(uuid='${provisioning}')?$select=overall_progress`);
      expect(await sdk.models.device.getProgress(updating)).toBe(70);
      expect(await sdk.models.device.getProgress(idle)).toBeNull();
      const rows = await get(
        `/v6/device?$select=uuid,overall_status,overall_progress&$filter=belongs_to__application eq ${fleet} and overall_progress ne null&$orderby=overall_progress desc`,
        alice.token,
      );
      expect(rows).toEqual([
        { uuid: updating, overall_status: "updating", overall_progress: 70 },
        { uuid: provisioning, overall_status: "configuring", overall_progress: 40 },
      ]);
      // Like overall_status, listed only when selected.
      const [plain] = await get(`/v6/device(uuid='${idle}')`, alice.token);
      expect(plain).not.toHaveProperty("overall_progress");
    });
  });

  describe("application.is_host and is_archived", () => {
    it("are read (false but for the catalogue's host OS fleets) and deviceType.getAllSupported filters on them", async () => {
      const [own] = await get(`/v6/application(${fleet})?$select=is_host,is_archived`, alice.token);
      expect(own).toEqual({ is_host: false, is_archived: false });
      // The catalogue's host OS fleet of the Raspberry Pi 4 (test/clients/supported-device-types.test.ts).
      const [host] = await get(
        `/v6/application?$select=id,is_host,is_archived&$filter=slug eq 'balena_os/raspberrypi4-64'`,
        alice.token,
      );
      expect(host).toMatchObject({ is_host: true, is_archived: false });
      const supported = async () =>
        (await sdk.models.deviceType.getAllSupported({ $select: "slug" })).map((type) => type.slug);
      expect(await supported()).toContain("raspberrypi4-64");
      expect(lastRequest()).toBe(
        "GET /v6/device_type?$orderby=name asc&$select=slug&$filter=is_default_for__application/any(idfa:(idfa/is_host eq true) and (idfa/is_archived eq false) and (idfa/owns__release/any(r:(r/status eq 'success') and (r/is_final eq true) and (r/is_invalidated eq false))))",
      );
      // Archived, it supports nothing any more.
      await world.server.test.db.prisma.application.update({
        where: { id: host?.id as number },
        data: { is_archived: true },
      });
      expect(await supported()).not.toContain("raspberrypi4-64");
      await world.server.test.db.prisma.application.update({
        where: { id: host?.id as number },
        data: { is_archived: false },
      });
      const writable = await world.send("PATCH", `/v6/application(${fleet})`, { is_host: true }, alice.token);
      expect(writable.status, writable.raw).toBe(400);
    });
  });

  describe("device_type.contract", () => {
    it("is balena's hw.device-type contract built from the catalogue entry", async () => {
      const [pi] = await get(`/v6/device_type(slug='raspberrypi4-64')?$select=contract`, alice.token);
      expect(pi?.contract).toMatchObject({
        slug: "raspberrypi4-64",
        version: "1",
        type: "hw.device-type",
        name: "Raspberry Pi 4 (using 64bit OS)",
        aliases: expect.arrayContaining(["raspberrypi4-64"]),
        assets: {},
        data: {
          arch: "aarch64",
          led: true,
          connectivity: { wifi: true },
          storage: { internal: false },
          media: { defaultBoot: "sdcard" },
          is_private: false,
        },
        partials: {
          instructions: expect.arrayContaining([expect.stringContaining("SD card")]),
          bootDevice: ["Connect power to the {{name}}"],
        },
      });
      const [nuc] = await get(`/v6/device_type(slug='intel-nuc')?$select=contract`, alice.token);
      expect(nuc?.contract).toMatchObject({
        data: {
          arch: "amd64",
          led: false,
          storage: { internal: true },
          media: { defaultBoot: "internal", altBoot: ["usb_mass_storage"] },
        },
        // Its catalogue instructions are per platform: only the partials balenaOS' flasher steps name
        // (balena's own, device-type-texts.test.ts).
        partials: {
          bootDeviceExternal: expect.arrayContaining([expect.stringContaining("{{name}}")]),
          flashIndicator: [expect.any(String)],
          bootDevice: ["Power up the {{name}}"],
        },
      });
      const [qemu] = await get(`/v6/device_type(slug='qemux86-64')?$select=contract`, alice.token);
      expect(qemu?.contract).toMatchObject({ slug: "qemux86-64", data: { media: { defaultBoot: "image" } } });
      // Large: listed only when named, as every balena-sdk call that reads it names it.
      const [plain] = await get(`/v6/device_type(slug='qemux86-64')`, alice.token);
      expect(plain).not.toHaveProperty("contract");
      // A JSON field: no comparisons or ordering.
      const compared = await world.send("GET", "/v6/device_type?$filter=contract eq 'x'");
      expect(compared.status, compared.raw).toBe(400);
    });

    it("gives balena-sdk its install method, instructions and partials", async () => {
      expect(await sdk.models.deviceType.getInstallMethod("raspberrypi4-64")).toBe("externalBoot");
      expect(lastRequest()).toBe(
        "GET /v6/device_type?$orderby=name asc&$select=contract&$top=1&$filter=(name eq 'raspberrypi4-64') or (slug eq 'raspberrypi4-64')",
      );
      expect(await sdk.models.deviceType.getInstallMethod("intel-nuc")).toBe("externalFlash");
      expect(await sdk.models.deviceType.getInstallMethod("qemux86-64")).toBe("image");
      const steps = await sdk.models.deviceType.getInstructions("raspberrypi4-64");
      expect(steps).toEqual(expect.arrayContaining(["Insert the SD card to the host machine."]));
      const qemu = await sdk.models.deviceType.getInterpolatedPartials("qemux86-64");
      expect(qemu.partials?.instructions).toEqual(expect.arrayContaining([expect.any(String)]));
    });

    it("is in GraphQL as JSON", async () => {
      const reply = await graphql<{ deviceType: { contract: Row } }>(
        world.server,
        `{ deviceType(slug: "raspberrypi4-64") { contract } }`,
      );
      expect(reply.errors).toBeUndefined();
      expect(reply.data?.deviceType.contract).toMatchObject({
        slug: "raspberrypi4-64",
        type: "hw.device-type",
      });
    });
  });

  describe("api_key.is_of__actor", () => {
    it("reads as a link, filters as the actor's id and cannot be expanded", async () => {
      await sdk.models.apiKey.create("laptop", "alice's laptop");
      const actor = (await sdk.auth.whoami())?.id as number;
      const keys = await sdk.models.apiKey.getAllNamedUserApiKeys({ $select: ["name", "is_of__actor"] });
      expect(keys).toEqual([{ name: "laptop", is_of__actor: { __id: actor } }]);
      expect(lastRequest()).toBe(
        `GET /v6/api_key?$orderby=name asc&$select=name,is_of__actor&$filter=(is_of__actor eq ${actor}) and (name ne null)`,
      );
      // A fleet's provisioning key, found by the fleet's actor (an integer in v6, as balena has it).
      const provisioning = await world.send(
        "POST",
        "/api-key/v1",
        { actorType: "application", actorTypeId: fleet, roles: ["provisioning-api-key"], name: "provision" },
        alice.token,
      );
      expectStatus(provisioning, 200);
      const [app] = await get(`/v6/application(${fleet})?$select=actor`, alice.token);
      expect(typeof app?.actor).toBe("number");
      const byFleet = await sdk.models.apiKey.getProvisioningApiKeysByApplication(fleet, {
        $select: "is_of__actor",
      });
      expect(byFleet).toEqual([{ is_of__actor: { __id: app?.actor } }]);
      const expanded = await world.send("GET", "/v6/api_key?$expand=is_of__actor", undefined, alice.token);
      expect(expanded.status, expanded.raw).toBe(400);
      const [v4] = await get(`/v4/api_key?$select=is_of__actor&$filter=name eq 'provision'`, alice.token);
      expect(v4).toEqual({ is_of__actor: { __id: app?.actor } });
      // GraphQL keeps it an Int: there is no actor to relate to.
      const reply = await graphql<{ apiKeys: { isOfActor: number }[] }>(
        world.server,
        `{ apiKeys(where: { name: { eq: "provision" } }) { isOfActor } }`,
      );
      expect(reply.data?.apiKeys).toEqual([{ isOfActor: app?.actor }]);
    });
  });
});
