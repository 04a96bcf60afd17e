import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyBox } from "../../src/auth/key-box.ts";
import { seedDemo } from "../../src/seed/demo.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// PATCH /device/v3/state as open-balena-api's state-patch-v3.ts takes it from a v17 supervisor:
// the body is keyed by device uuid, the key is `api_secret`, the running release is the fleet's
// `apps.<app uuid>.release_uuid`; members it does not store are ignored; the answer is an empty 200.

const uuid = () => randomBytes(16).toString("hex");
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe.each(databaseKinds)("PATCH /device/v3/state on %s", (kind) => {
  let server: TestServer;
  let provisioningKey: string;
  beforeAll(async () => {
    server = await startTestServer(kind);
    await seedDemo(server.test.db);
    provisioningKey = JSON.parse(
      (await server.app.inject({ method: "POST", url: "/api-key/application/1/provisioning" })).body,
    );
  });
  afterAll(() => server.close());

  const register = async () => {
    const id = uuid();
    const response = await server.app.inject({
      method: "POST",
      url: "/device/register",
      headers: bearer(provisioningKey),
      payload: { application: 1, uuid: id },
    });
    return { id, key: JSON.parse(response.body).api_key as string };
  };
  const patch = (key: string, body: unknown) =>
    server.app.inject({
      method: "PATCH",
      url: "/device/v3/state",
      headers: bearer(key),
      payload: body as object,
    });
  const fleet = () => server.test.db.prisma.application.findUniqueOrThrow({ where: { id: 1 } });

  it("stores the report: device fields, api_secret as the supervisor key, release_uuid as the running release", async () => {
    const { id, key } = await register();
    const release = await server.test.db.prisma.release.findFirstOrThrow({
      where: { belongs_to__application: 1, status: "success" },
    });
    const response = await patch(key, {
      [id]: {
        status: "Idle",
        ip_address: "10.1.2.4",
        api_port: 48484,
        api_secret: "v3-secret",
        os_version: "balenaOS 6.0.13",
        supervisor_version: "17.1.4",
        // A real supervisor sends more than the cloud stores: ignored, as the real API picks its fields.
        name: "ignored-name",
        update_pending: false,
        apps: {
          [(await fleet()).uuid]: { release_uuid: release.commit, releases: { [release.commit]: {} } },
        },
      },
    });
    expect([response.statusCode, response.body]).toEqual([200, ""]);
    const row = await server.test.db.prisma.device.findUniqueOrThrow({ where: { uuid: id } });
    expect(row).toMatchObject({
      status: "Idle",
      ip_address: "10.1.2.4",
      supervisor_api_port: 48484,
      supervisor_version: "17.1.4",
      is_online: true,
      is_running__release: release.id,
    });
    const [secret] = await server.test.db.query<{ value: string }>({
      text: `SELECT "value" FROM "setting" WHERE "name" = 'supervisor_key_secret'`,
      values: [],
    });
    expect(new KeyBox(secret?.value ?? "").unseal(row.supervisor_api_key_ciphertext ?? "")).toBe("v3-secret");
  });

  it("refuses another device's uuid (401), a user's key (401), no device (400), a malformed member (400)", async () => {
    const a = await register();
    const b = await register();
    expect((await patch(a.key, { [b.id]: { status: "Idle" } })).statusCode).toBe(401);
    expect((await patch(a.key, { [a.id]: { status: "Idle" }, [b.id]: { status: "Idle" } })).statusCode).toBe(
      401,
    );
    expect((await patch(provisioningKey, { [a.id]: { status: "Idle" } })).statusCode).toBe(401);
    expect((await patch(a.key, {})).statusCode).toBe(400);
    expect((await patch(a.key, { [a.id]: null })).statusCode).toBe(400);
    expect((await patch(a.key, { [a.id]: { download_progress: 101 } })).statusCode).toBe(400);
    expect((await patch(a.key, { [a.id]: { api_port: "x" } })).statusCode).toBe(400);
  });

  // fetchData: a release the API cannot find for that app is an UnauthorizedError.
  it("refuses a release that is not a successful release of the named app: 401, nothing stored", async () => {
    const { id, key } = await register();
    const response = await patch(key, {
      [id]: { status: "Stopping", apps: { [(await fleet()).uuid]: { release_uuid: "f".repeat(32) } } },
    });
    expect(response.statusCode).toBe(401);
    const row = await server.test.db.prisma.device.findUniqueOrThrow({ where: { uuid: id } });
    expect(row.status).not.toBe("Stopping");
  });
});
