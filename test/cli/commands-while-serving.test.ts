import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { privateEntry } from "../support/catalogue/catalogue-fixture.ts";
import { type RunningServer, startServer } from "../support/processes.ts";

const bin = fileURLToPath(new URL("../../bin/fleetgate.js", import.meta.url));
const run = promisify(execFile);

/** Runs `fleetgate …` on `dataDir` and resolves with what it printed and its exit code. */
async function fleetgate(dataDir: string, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: "" },
      maxBuffer: 16 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** A socket file nobody listens on: what a server killed with SIGKILL leaves behind. */
async function staleSocket(path: string): Promise<void> {
  const child = spawn(
    process.execPath,
    ["-e", "require('node:net').createServer().listen(process.argv[1], () => console.log('up'))", path],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
  expect(statSync(path).isSocket()).toBe(true);
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid ?? 0;
}

describe("database commands while `fleetgate serve` holds the embedded database", {
  timeout: 240_000,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "fleetgate-serving-"));
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("run in the server, print what they print without one, and leave the directory to the next process", async () => {
    const data = join(dir, "data");
    mkdirSync(data);
    // Left by a server that was killed: a lock of a dead process and a socket nobody listens on.
    writeFileSync(join(data, "fleetgate.lock"), String(await deadPid()));
    await staleSocket(join(data, "fleetgate.sock"));

    server = await startServer({ DATA_DIR: data, DATABASE_URL: "", ADMIN_PASSWORD: "admin-password" });
    // Only its owner may send commands: they create admins.
    expect(statSync(join(data, "fleetgate.sock")).mode & 0o777).toBe(0o600);

    const user = await fleetgate(
      data,
      "user",
      "add",
      "carol",
      "--email",
      "carol@example.com",
      "--password",
      "carol-password",
    );
    expect(user).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(user.stdout)).toMatchObject({ username: "carol" });
    const org = await fleetgate(data, "org", "add", "acme", "--name", "Acme", "--owner", "carol");
    expect(org).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(org.stdout)).toMatchObject({ handle: "acme" });

    // The server sees the new rows at once: carol logs in and is a member of acme.
    const login = await fetch(`${server.url}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "carol", password: "carol-password" }),
    });
    expect(login.status).toBe(200);
    const orgs = await fetch(`${server.url}/v6/organization?$select=handle&$orderby=handle`, {
      headers: { authorization: `Bearer ${await login.text()}` },
    });
    expect(await orgs.json()).toEqual({ d: [{ handle: "acme" }, { handle: "carol" }] });

    const file = join(dir, "private.json");
    writeFileSync(file, JSON.stringify([privateEntry]));
    expect(await fleetgate(data, "catalogue", "import", file)).toEqual({
      code: 0,
      stdout: '{"deviceTypes":1}\n',
      stderr: "",
    });
    const exported = await fleetgate(data, "catalogue", "export");
    expect(exported).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(exported.stdout)).toContainEqual(privateEntry);
    expect(JSON.parse(exported.stdout).length).toBeGreaterThan(20);
    // The seed's transaction and the requests that arrive meanwhile do not mix: every write answers
    // on its own, and the seed commits whole.
    const admin = await fetch(`${server.url}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: "admin-password" }),
    });
    const asAdmin = { authorization: `Bearer ${await admin.text()}`, "content-type": "application/json" };
    const seeding = fleetgate(data, "seed", "--demo");
    let seeded: Awaited<typeof seeding> | undefined;
    void seeding.then((result) => {
      seeded = result;
    });
    const statuses: number[] = [];
    for (let i = 0; !seeded; i++) {
      const created = await fetch(`${server.url}/v6/organization`, {
        method: "POST",
        headers: asAdmin,
        body: JSON.stringify({ name: `Meanwhile ${i}` }),
      });
      statuses.push(created.status);
    }
    expect(seeded).toEqual({ code: 0, stdout: '{"fleets":3,"releases":9,"devices":60}\n', stderr: "" });
    expect(statuses.length).toBeGreaterThan(1);
    expect(new Set(statuses)).toEqual(new Set([201]));
    const meanwhile = await fetch(
      `${server.url}/v6/organization/$count?$filter=startswith(name,'Meanwhile')`,
      { headers: asAdmin },
    );
    expect(await meanwhile.json()).toEqual({ d: statuses.length });
    const devices = await fetch(`${server.url}/v6/device/$count`, { headers: asAdmin });
    expect(await devices.json()).toEqual({ d: 60 });

    const migrated = await fleetgate(data, "migrate");
    expect(migrated).toEqual({ code: 0, stdout: "Database is up to date\n", stderr: "" });
    // A command that fails says why in one line and exits 1, as without a server.
    const again = await fleetgate(
      data,
      "user",
      "add",
      "carol",
      "--email",
      "c2@example.com",
      "--password",
      "carol-password",
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^fleetgate user: [^\n]+\n$/);
    const notJson = join(dir, "not.json");
    writeFileSync(notJson, "{");
    const badFile = await fleetgate(data, "catalogue", "import", notJson);
    expect(badFile.code).toBe(1);
    expect(badFile.stderr).toMatch(/^fleetgate catalogue: [^\n]*not JSON[^\n]*\n$/);

    expect(await server.stop()).toBe(0);
    server = undefined;
    expect(existsSync(join(data, "fleetgate.sock"))).toBe(false);
    expect(existsSync(join(data, "fleetgate.lock"))).toBe(false);

    // Without the server, the same commands open the directory themselves and print the same.
    expect(await fleetgate(data, "catalogue", "export")).toEqual(exported);
    expect(await fleetgate(data, "migrate")).toEqual(migrated);
    expect(
      await fleetgate(
        data,
        "user",
        "add",
        "carol",
        "--email",
        "c2@example.com",
        "--password",
        "carol-password",
      ),
    ).toEqual(again);
    expect(await fleetgate(data, "catalogue", "import", notJson)).toEqual(badFile);
  });

  it("a live process that holds the directory and takes no commands gets a one-line error", async () => {
    const data = join(dir, "held");
    mkdirSync(data);
    // This test's own process holds it, as another command or a foreign process would.
    writeFileSync(join(data, "fleetgate.lock"), String(process.pid));
    await staleSocket(join(data, "fleetgate.sock"));
    const result = await fleetgate(
      data,
      "user",
      "add",
      "dave",
      "--email",
      "dave@example.com",
      "--password",
      "dave-password",
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      `fleetgate user: The data directory ${data} is in use by process ${process.pid}, which takes no commands (not a running \`fleetgate serve\`): wait for it to finish, or stop it\n`,
    );
  });
});
