import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashKey } from "../../src/auth/api-keys.ts";
import { databaseKinds } from "../support/databases.ts";
import { loggedSdk, sdkCalls } from "../support/sdk/balena-sdk.ts";
import {
  type ClientsWorld,
  clientsWorld,
  expectStatus,
  type User,
  uuid,
} from "../support/sdk/clients-world.ts";

// Issue 30:
// - API keys are 32 characters, as balena's (clients check the length), still 128 random bits, and
//   hex, so none starts with "-"; keys made before (64 hex characters) keep working;
// - a fleet's uuid may be chosen by the client, as balena-sdk 23's `application.create({uuid})` sends
//   it: balena's rule (a UUID version 4 without dashes, lower case), unique (409).

const KEY = /^[0-9a-f]{32}$/;
const FLEET_UUID = /^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/;

describe.each(databaseKinds)("API keys and fleet uuids as balena-sdk makes them on %s", (kind) => {
  let world: ClientsWorld;
  let owner: User;
  let fleet: number;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    owner = await world.user("key-maker");
    fleet = await world.fleet("keyed", "raspberrypi4-64", owner.token);
  });
  afterAll(() => world.close());

  it("every key balena-sdk asks for is 32 hex characters, and works", async () => {
    const v6 = loggedSdk(world.server.url);
    const v7 = loggedSdk(world.server.url, "latest");
    await v6.sdk.auth.loginWithToken(owner.token);
    await v7.sdk.auth.loginWithToken(owner.token);
    const calls6 = sdkCalls(v6.log);
    const calls7 = sdkCalls(v7.log);
    const device = await world.device(fleet, {}, owner.token);
    const registered = await calls6.call("device.register", () =>
      v6.sdk.models.device.register(fleet, uuid()),
    );
    const keys = [
      await calls6.call("apiKey.create", () => v6.sdk.models.apiKey.create("full key")),
      await calls7.call("v7 apiKey.create", () =>
        v7.sdk.models.apiKey.create({ name: "v7 key", expiryDate: null }),
      ),
      await calls6.call("generateProvisioningKey", () =>
        v6.sdk.models.application.generateProvisioningKey(fleet),
      ),
      await calls7.call("v7 generateProvisioningKey", () =>
        v7.sdk.models.application.generateProvisioningKey({
          slugOrUuidOrId: fleet,
          keyExpiryDate: "2099-01-01",
        }),
      ),
      await calls6.call("generateDeviceKey", () => v6.sdk.models.device.generateDeviceKey(device.id)),
      registered.api_key,
    ];
    for (const key of keys) {
      expect(key).toMatch(KEY);
      const whoami = await world.send("GET", "/actor/v1/whoami", undefined, key);
      expectStatus(whoami, 200, "whoami with a new key");
    }
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("a key made before, of 64 hex characters, keeps working", async () => {
    const old = "0123456789abcdef".repeat(4);
    const user = await world.server.test.db.prisma.user.findUniqueOrThrow({ where: { id: owner.id } });
    // As createApiKey stored keys until now: only the hash.
    await world.server.test.db.query({
      text: `INSERT INTO "api_key" ("is_of__actor", "name", "key_hash") VALUES ($1::int4, 'old key', $2::text)`,
      values: [user.actor, hashKey(old)],
    });
    const { sdk } = loggedSdk(world.server.url, "latest");
    await sdk.auth.loginWithToken(old);
    expect(await sdk.auth.whoami()).toMatchObject({ actorType: "user", username: "key-maker" });
    const fleets = await sdk.models.application.getAll({ $select: ["id"], $filter: { is_host: false } });
    expect(fleets).toEqual([{ id: fleet }]);
  });

  it("application.create({uuid}) (balena-sdk 23): the client's uuid, checked and unique", async () => {
    const { sdk, log } = loggedSdk(world.server.url, "latest");
    await sdk.auth.loginWithToken(owner.token);
    const calls = sdkCalls(log);
    const chosen = "0f4a3c2b1d6e4f70a1b2c3d4e5f60718";
    const from = log.length;
    const created = await calls.call("create with uuid", () =>
      sdk.models.application.create({
        name: "chosen-uuid",
        deviceType: "raspberrypi4-64",
        organization: "key-maker",
        uuid: chosen,
      }),
    );
    expect(
      log
        .slice(from)
        .map((e) => e.request.replace(world.server.url, ""))
        .at(-1),
    ).toMatch(
      new RegExp(
        `^POST /v7/application \\{"app_name":"chosen-uuid","uuid":"${chosen}","is_for__device_type":\\d+,"organization":\\d+\\}$`,
      ),
    );
    expect(created).toMatchObject({ app_name: "chosen-uuid", uuid: chosen });
    // balena-sdk finds it by that uuid.
    expect(
      await calls.call("get by uuid", () => sdk.models.application.get(chosen, { $select: ["id", "uuid"] })),
    ).toEqual({
      id: created.id,
      uuid: chosen,
    });

    // Taken: 409 with "unique", as every unique key.
    const taken = await calls.failure("taken", () =>
      sdk.models.application.create({
        name: "same-uuid",
        deviceType: "raspberrypi4-64",
        organization: "key-maker",
        uuid: chosen,
      }),
    );
    expect([(taken as Error & { statusCode?: number }).statusCode, /unique/i.test(taken.message)]).toEqual([
      409,
      true,
    ]);

    // Not balena's form: 400 with balena's words.
    for (const wrong of [
      "0F4A3C2B1D6E4F70A1B2C3D4E5F60719", // upper case: balena-sdk looks a uuid up lower-cased
      "0f4a3c2b1d6e1f70a1b2c3d4e5f60719", // version 1
      "0f4a3c2b1d6e4f70c1b2c3d4e5f60719", // not RFC 4122's variant
      "0f4a3c2b-1d6e-4f70-a1b2-c3d4e5f6", // dashes
      "abc",
    ]) {
      const refused = await calls.failure(`uuid ${wrong}`, () =>
        sdk.models.application.create({
          name: "bad-uuid",
          deviceType: "raspberrypi4-64",
          organization: "key-maker",
          uuid: wrong,
        }),
      );
      expect([(refused as Error & { statusCode?: number }).statusCode, refused.message], wrong).toEqual([
        400,
        "Request error: Application UUID must be a 32 character long lower case UUID version 4.",
      ]);
    }

    // Without one (balena-sdk 19 sends none), the server makes a version 4 uuid.
    const v6 = loggedSdk(world.server.url);
    await v6.sdk.auth.loginWithToken(owner.token);
    const made = await sdkCalls(v6.log).call("v6 create", () =>
      v6.sdk.models.application.create({
        name: "made-uuid",
        deviceType: "raspberrypi4-64",
        organization: "key-maker",
      }),
    );
    expect(made.uuid).toMatch(FLEET_UUID);
    // A uuid is set once: a PATCH may not change it.
    const patched = await world.send(
      "PATCH",
      `/v6/application(${made.id})`,
      { uuid: chosen.replace("0f", "1f") },
      owner.token,
    );
    expect([patched.status, patched.body]).toEqual([400, "'uuid' of application is not writable"]);
  });
});
