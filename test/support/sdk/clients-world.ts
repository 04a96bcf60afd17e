import { randomBytes } from "node:crypto";
import { expect } from "vitest";
import { loadDefaultCatalogue } from "../../../src/catalogue/defaults.ts";
import type { DatabaseKind } from "../databases.ts";
import { injectJson, type JsonReply, type Method } from "../inject-json.ts";
import { startTestServer, type TestServer } from "../server.ts";

// What the tests of test/clients share: a server with the shipped device-type catalogue, and users,
// fleets, devices and releases made through the API as the balena clients make them.

export interface ClientsWorld {
  readonly server: TestServer;
  /** A request with `token` as the bearer (the test admin's key when absent). */
  send(method: Method, url: string, payload?: unknown, token?: string): Promise<JsonReply>;
  /** A new user (made by the admin), logged in. */
  user(name: string): Promise<User>;
  /** A fleet of `user`'s personal organization (admin's when absent). */
  fleet(name: string, deviceType: string, token?: string): Promise<number>;
  device(fleet: number, extra?: Record<string, unknown>, token?: string): Promise<Device>;
  release(fleet: number, body: Record<string, unknown>, token?: string): Promise<number>;
  close(): Promise<void>;
}

export interface User {
  readonly id: number;
  readonly username: string;
  readonly email: string;
  readonly password: string;
  /** A session token from POST /login_. */
  readonly token: string;
}

export interface Device {
  readonly id: number;
  readonly uuid: string;
}

export const uuid = () => randomBytes(16).toString("hex");

export const expectStatus = (reply: JsonReply, status: number, what = "") =>
  expect(reply.status, `${what} ${reply.raw}`).toBe(status);

/** `env`: configuration the server starts with (README, Configuration), over the tests' defaults. */
export async function clientsWorld(
  kind: DatabaseKind,
  env: Record<string, string> = {},
): Promise<ClientsWorld> {
  const server = await startTestServer(kind, env);
  await loadDefaultCatalogue(server.test.db);
  const send = (method: Method, url: string, payload?: unknown, token?: string) =>
    injectJson(server, method, url, payload, token ? { authorization: `Bearer ${token}` } : {});
  // The test admin's own organization: where its fleets go.
  expectStatus(await send("POST", "/v6/organization", { name: "clients" }), 201, "POST /v6/organization");
  return {
    server,
    send,
    async user(name) {
      const email = `${name}@example.com`;
      const password = `${name}-password`;
      const created = await send("POST", "/v6/user", { username: name, email, password });
      expectStatus(created, 201, `POST /v6/user ${name}`);
      const login = await send("POST", "/login_", { username: name, password });
      expectStatus(login, 200, `login ${name}`);
      return { id: (created.body as { id: number }).id, username: name, email, password, token: login.raw };
    },
    async fleet(name, deviceType, token) {
      const created = await send(
        "POST",
        "/v6/application",
        { app_name: name, device_type: deviceType },
        token,
      );
      expectStatus(created, 201, `POST /v6/application ${name}`);
      return (created.body as { id: number }).id;
    },
    async device(fleet, extra = {}, token) {
      const created = await send(
        "POST",
        "/v6/device",
        { belongs_to__application: fleet, uuid: uuid(), ...extra },
        token,
      );
      expectStatus(created, 201, "POST /v6/device");
      return created.body as Device;
    },
    async release(fleet, body, token) {
      const created = await send(
        "POST",
        "/v6/release",
        { belongs_to__application: fleet, source: "cloud", ...body },
        token,
      );
      expectStatus(created, 201, `POST /v6/release ${JSON.stringify(body)}`);
      return (created.body as { id: number }).id;
    },
    close: () => server.close(),
  };
}
