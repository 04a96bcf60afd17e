import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds, freshDatabase } from "../support/databases.ts";
import { type RunningServer, startServer } from "../support/processes.ts";

// A real `fleetgate serve` gets requests that carry every kind of credential: a session token
// (JWT), a user API key in the Authorization header and in `?apikey=`, a provisioning key, a device
// key, the supervisor's key in a state report, passwords in login and user bodies, and failing
// requests with credentials in their URLs. Its whole log (stdout, at trace level) must hold none
// of them, and still say which request was answered how.

const bin = fileURLToPath(new URL("../../bin/fleetgate.js", import.meta.url));
const secret = (label: string) => `${label}-${randomBytes(12).toString("hex")}`;

interface LogLine {
  readonly msg?: string;
  readonly method?: string;
  readonly url?: string;
  readonly status?: number;
}

describe.each(databaseKinds)("no credential in the log of fleetgate serve on %s", (kind) => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  /** Every credential the requests below carried. */
  const secrets = new Map<string, string>();
  const remember = (label: string, value: string) => {
    expect(value.length, label).toBeGreaterThan(8);
    secrets.set(label, value);
    return value;
  };

  beforeAll(async () => {
    if (kind === "embedded") {
      const dir = mkdtempSync(join(tmpdir(), "fleetgate-log-secrets-"));
      env = { DATA_DIR: dir, DATABASE_URL: "" };
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    } else {
      const test = await freshDatabase(kind, { empty: true });
      await test.db.close();
      env = { DATABASE_URL: test.url ?? "" };
      cleanup = () => test.drop().catch(() => {});
    }
    // Fleets to make keys for; the server is not running yet (the embedded database has one user).
    await promisify(execFile)(process.execPath, [bin, "seed", "--demo"], {
      env: { ...process.env, ...env },
    });
    server = await startServer({ ...env, ADMIN_PASSWORD: "", LOG_LEVEL: "trace" });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await cleanup();
  });

  async function call(
    method: string,
    path: string,
    options: { authorization?: string; body?: unknown; rawBody?: string } = {},
  ): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = {};
    if (options.authorization) headers.authorization = options.authorization;
    if (options.body !== undefined || options.rawBody !== undefined)
      headers["content-type"] = "application/json";
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers,
      ...(options.rawBody !== undefined ? { body: options.rawBody } : {}),
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    return { status: response.status, text: await response.text() };
  }

  it("logs method, URL and status of every request, and none of their credentials", async () => {
    const adminPassword = /with password: (\S+)/.exec(server.stderr())?.[1] ?? "";
    remember("generated admin password", adminPassword);

    // Passwords in login bodies, a right one and a wrong one.
    const wrong = await call("POST", "/login_", {
      body: { username: "admin", password: remember("wrong password", secret("wrong-pw")) },
    });
    expect(wrong.status).toBe(401);
    const login = await call("POST", "/login_", { body: { username: "admin", password: adminPassword } });
    expect(login.status, login.text).toBe(200);
    const jwt = remember("session token", login.text);
    remember("session token signature", jwt.split(".")[2] ?? "");
    const asAdmin = `Bearer ${jwt}`;
    expect((await call("GET", "/user/v1/whoami", { authorization: asAdmin })).status).toBe(200);

    // A user API key, in the header and in `?apikey=`.
    const made = await call("POST", "/api-key/user/full", { authorization: asAdmin, body: { name: "logs" } });
    expect(made.status, made.text).toBe(200);
    const userKey = remember("user API key", JSON.parse(made.text) as string);
    expect(
      (await call("GET", "/v6/application?$select=id", { authorization: `Bearer ${userKey}` })).status,
    ).toBe(200);
    expect((await call("GET", `/v6/application?$select=id&apikey=${userKey}`)).status).toBe(200);
    expect((await call("GET", `/actor/v1/whoami?apikey=${encodeURIComponent(userKey)}`)).status).toBe(200);

    // Passwords in a new user's body and in a PATCH of it.
    const created = await call("POST", "/v6/user", {
      authorization: asAdmin,
      body: {
        username: "logged",
        email: "logged@example.com",
        password: remember("new user password", secret("pw")),
      },
    });
    expect(created.status, created.text).toBe(201);
    const userId = (JSON.parse(created.text) as { id: number }).id;
    const patched = await call("PATCH", `/v6/user(${userId})`, {
      authorization: asAdmin,
      body: { password: remember("changed password", secret("pw2")) },
    });
    expect(patched.status, patched.text).toBe(200);

    // A provisioning key registers a device; the device's key reads its target and reports the
    // supervisor's own key.
    const provisioning = await call("POST", "/api-key/application/1/provisioning", {
      authorization: asAdmin,
    });
    expect(provisioning.status, provisioning.text).toBe(200);
    const provisioningKey = remember("provisioning key", JSON.parse(provisioning.text) as string);
    const uuid = randomBytes(16).toString("hex");
    const registered = await call("POST", "/device/register", {
      authorization: `Bearer ${provisioningKey}`,
      body: { application: 1, uuid },
    });
    expect(registered.status, registered.text).toBe(201);
    const deviceKey = remember("device key", (JSON.parse(registered.text) as { api_key: string }).api_key);
    expect(
      (await call("GET", `/device/v2/${uuid}/state`, { authorization: `Bearer ${deviceKey}` })).status,
    ).toBe(200);
    const reported = await call("PATCH", `/device/v2/${uuid}/state`, {
      authorization: `Bearer ${deviceKey}`,
      body: { api_key: remember("supervisor key", secret("supervisorkey")), status: "Idle" },
    });
    expect(reported.status, reported.text).toBe(200);

    // Failing requests that carry credentials: in the URL, in a header of an unknown scheme, in a
    // body that is not JSON.
    expect((await call("GET", `/v6/no_such_resource?apikey=${userKey}`)).status).toBe(404);
    expect((await call("GET", `/v6/application?$filter=no_such_field eq 1&apikey=${userKey}`)).status).toBe(
      400,
    );
    expect(
      (await call("GET", `/v6/application?apikey=${remember("invalid key", secret("badkey"))}`)).status,
    ).toBe(401);
    const basic = Buffer.from(`admin:${remember("basic password", secret("basic"))}`).toString("base64");
    expect(
      (await call("GET", "/v6/application", { authorization: `Basic ${remember("basic", basic)}` })).status,
    ).toBe(401);
    const broken = await call("POST", "/login_", {
      rawBody: `{"username":"admin","password":"${remember("password in broken JSON", secret("broken"))}"`,
    });
    expect(broken.status).toBe(400);
    expect(broken.text).not.toContain(secrets.get("password in broken JSON"));
    const invalid = await call("POST", "/graphql", { authorization: asAdmin, body: { query: "{ nope }" } });
    expect(invalid.text).toContain("errors");
    expect(
      (await call("POST", `/graphql?apikey=${userKey}`, { body: { query: "{ applications { id } }" } }))
        .status,
    ).toBe(200);

    expect(await server.stop()).toBe(0);
    const log = server.stdout();
    // The generated admin password is shown once on stderr, as intended; nothing else is.
    const stderr = server.stderr().replace(/^Created the admin user .*$/m, "");
    for (const [label, value] of secrets) {
      expect(log.includes(value), `${label} in the log`).toBe(false);
      expect(stderr.includes(value), `${label} on stderr`).toBe(false);
    }

    // Still useful: every line is JSON, and each request has its method, URL and status.
    const lines = log
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine);
    const requests = lines
      .filter((line) => line.msg === "request")
      .map(({ method, url, status }) => `${method} ${url} ${status}`);
    expect(requests).toEqual(
      expect.arrayContaining([
        "POST /login_ 401",
        "POST /login_ 200",
        "GET /v6/application?$select=id 200",
        "GET /v6/application?$select=id&apikey=[redacted] 200",
        "GET /actor/v1/whoami?apikey=[redacted] 200",
        `PATCH /v6/user(${userId}) 200`,
        "POST /device/register 201",
        `PATCH /device/v2/${uuid}/state 200`,
        "GET /v6/no_such_resource?apikey=[redacted] 404",
        "GET /v6/application?$filter=no_such_field%20eq%201&apikey=[redacted] 400",
        "GET /v6/application?apikey=[redacted] 401",
        "POST /login_ 400",
        "POST /graphql?apikey=[redacted] 200",
      ]),
    );
  }, 120_000);
});
