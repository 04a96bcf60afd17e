import type { BalenaSDK } from "balena-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type Exchange, type LatestSDK, loggedSdk } from "../support/sdk/balena-sdk.ts";
import {
  type ClientsWorld,
  clientsWorld,
  expectStatus,
  type User,
  uuid,
} from "../support/sdk/clients-world.ts";

// Issue 30, item 10: the non-OData routes balena-sdk calls that fleetgate did not serve.
// - POST /application/:id/generate-api-key (balena-sdk 19's application.generateApiKey): a key of
//   the calling user, as open-balena-api's createUserApiKey makes it (fresh login, the fleet unused).
// - GET /config/vars[?deviceType=] (config.getConfigVarSchema, both lines): balena's constants.

describe.each(databaseKinds)("legacy client routes on %s", (kind) => {
  let world: ClientsWorld;
  let alice: User;
  let fleet: number;
  let v6: { sdk: BalenaSDK; log: Exchange[] };
  let v7: { sdk: LatestSDK; log: Exchange[] };
  const lastRequest = (log: Exchange[]) => log.at(-1)?.request.replace(world.server.url, "");

  beforeAll(async () => {
    world = await clientsWorld(kind);
    alice = await world.user("legacy-alice");
    fleet = await world.fleet("legacy-fleet", "raspberrypi4-64", alice.token);
    v6 = loggedSdk(world.server.url);
    await v6.sdk.auth.loginWithToken(alice.token);
    v7 = loggedSdk(world.server.url, "latest");
    await v7.sdk.auth.loginWithToken(alice.token);
  });
  afterAll(() => world?.close());

  describe("POST /application/:id/generate-api-key", () => {
    it("balena-sdk 19's generateApiKey gets a working, unnamed key of the calling user", async () => {
      const key = await v6.sdk.models.application.generateApiKey(fleet);
      expect(lastRequest(v6.log)).toBe(`POST /application/${fleet}/generate-api-key`);
      expect(key).toMatch(/^[0-9a-f]{32}$/);
      const whoami = await world.send("GET", "/actor/v1/whoami", undefined, key);
      expectStatus(whoami, 200, "whoami with the key");
      expect(whoami.body).toMatchObject({
        actorType: "user",
        actorTypeId: alice.id,
        username: alice.username,
      });
      const keys = await world.send(
        "GET",
        "/v6/api_key?$select=name,description,expiry_date&$orderby=id asc",
        undefined,
        alice.token,
      );
      expect((keys.body as { d: unknown[] }).d).toEqual([
        { name: null, description: null, expiry_date: null },
      ]);
    });

    it("asks for a fresh login as a full user key does: an API key, a device or nobody is refused", async () => {
      const named = await world.send("POST", "/api-key/user/full", { name: "full" }, alice.token);
      expectStatus(named, 200, "named key");
      const byKey = await world.send(
        "POST",
        `/application/${fleet}/generate-api-key`,
        {},
        named.body as string,
      );
      expect([byKey.status, byKey.body]).toEqual([401, "Fresh authentication token required"]);
      const anonymous = await world.server.app.inject({
        method: "POST",
        url: `/application/${fleet}/generate-api-key`,
        headers: { authorization: "" },
      });
      expect(anonymous.statusCode).toBe(401);
    });

    it("as in balena, the fleet in the path plays no part (the SDK looks it up first)", async () => {
      const reply = await world.send("POST", "/application/999999/generate-api-key", undefined, alice.token);
      expectStatus(reply, 200, "any fleet id");
      const missing = await v6.sdk.models.application.generateApiKey(999999).catch((error: Error) => error);
      expect(missing).toBeInstanceOf(Error);
      expect((missing as Error & { code?: string }).code).toBe("BalenaApplicationNotFound");
    });
  });

  describe("GET /device/v2|v3/:uuid/state for users", () => {
    // Issue 30, item 13: the target-state reads are for device keys only (balena also answers a
    // user; here the contract holds). A user's getSupervisorTargetState is refused as a
    // device's key for another device is.
    it("getSupervisorTargetState is refused to a user, even one who may read the device (both lines)", async () => {
      const registered = await world.send(
        "POST",
        "/device/register",
        { application: fleet, uuid: uuid() },
        alice.token,
      );
      expectStatus(registered, 201, "register");
      const { uuid: deviceUuid, api_key: deviceKey } = registered.body as { uuid: string; api_key: string };
      const own = await world.send("GET", `/device/v2/${deviceUuid}/state`, undefined, deviceKey);
      expect(own.status).toBe(200);
      for (const version of ["v2", "v3"]) {
        const byUser = await world.send(
          "GET",
          `/device/${version}/${deviceUuid}/state`,
          undefined,
          alice.token,
        );
        expect(byUser.status).toBe(401);
      }
      await expect(v6.sdk.models.device.getSupervisorTargetState(deviceUuid)).rejects.toBeInstanceOf(Error);
      await expect(v7.sdk.models.device.getSupervisorTargetState(deviceUuid, 3)).rejects.toBeInstanceOf(
        Error,
      );
    });
  });

  describe("GET /config/vars", () => {
    it("getConfigVarSchema: balena's constants and the supervisor's configuration variables (both lines)", async () => {
      for (const { sdk, log } of [v6, v7]) {
        const vars = (await sdk.models.config.getConfigVarSchema()) as unknown as Record<string, unknown> & {
          configVarSchema: { properties: Record<string, unknown> };
        };
        expect(lastRequest(log)).toBe("GET /config/vars");
        expect(vars).toMatchObject({
          reservedNames: ["RESIN", "BALENA", "USER"],
          reservedNamespaces: ["RESIN_", "BALENA_"],
          invalidRegex: "/^\\d|\\W/",
          whiteListedNames: expect.arrayContaining(["RESIN_SUPERVISOR_POLL_INTERVAL"]),
          whiteListedNamespaces: ["RESIN_HOST_", "RESIN_UI_", "BALENA_HOST_", "BALENA_UI_"],
          blackListedNames: expect.arrayContaining(["RESIN_SUPERVISOR_OVERRIDE_LOCK"]),
          configVarSchema: { type: "object", $schema: "http://json-schema.org/draft-06/schema#" },
        });
        expect(vars.configVarSchema.properties).toHaveProperty("RESIN_SUPERVISOR_POLL_INTERVAL");
        expect(vars.configVarSchema.properties).not.toHaveProperty("RESIN_HOST_CONFIG_gpu_mem");
        const pi = (await sdk.models.config.getConfigVarSchema("raspberrypi4-64")) as unknown as typeof vars;
        expect(lastRequest(log)).toBe("GET /config/vars?deviceType=raspberrypi4-64");
        expect(pi.configVarSchema.properties).toHaveProperty("RESIN_HOST_CONFIG_gpu_mem");
        expect(pi.configVarSchema.properties).toHaveProperty("RESIN_SUPERVISOR_POLL_INTERVAL");
      }
    });

    it("needs no credential, as /config", async () => {
      const reply = await world.server.app.inject({
        method: "GET",
        url: "/config/vars?deviceType=up-board",
        headers: { authorization: "" },
      });
      expect(reply.statusCode).toBe(200);
      expect(JSON.parse(reply.body).configVarSchema.properties).toHaveProperty("RESIN_HOST_CONFIGFS_ssdt");
    });
  });
});
