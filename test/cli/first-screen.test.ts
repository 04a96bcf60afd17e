import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { startServer } from "../support/processes.ts";

const bin = fileURLToPath(new URL("../../bin/fleetgate.js", import.meta.url));
const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
// Terminal colours and the carriage returns a terminal adds.
// biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are what is removed
const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "").replaceAll("\r", "");

/**
 * `fleetgate serve` on a pseudo-terminal, as `npm start` runs in a person's terminal (util-linux
 * `script` gives it one). Resolves with the screen once the banner is out; `stop` types Ctrl-C.
 * `exec` makes the server the terminal's process: otherwise a shell that does not exec its last
 * command itself (dash, CI's /bin/sh) stands in between and dies of the Ctrl-C meant for the server.
 */
function serveOnTerminal(env: Record<string, string>) {
  const child = spawn(
    "script",
    ["-qfec", `exec ${quote(process.execPath)} ${quote(bin)} serve`, "/dev/null"],
    {
      env: { ...process.env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let screen = "";
  child.stdout.on("data", (chunk) => {
    screen += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner:\n${screen}`)), 90_000);
    child.stdout.on("data", () => {
      if (plain(screen).includes("Ctrl-C stops it.")) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => reject(new Error(`exited with ${code}:\n${screen}`)));
  });
  return {
    ready,
    screen: () => plain(screen),
    async stop() {
      child.stdin.write("\u0003");
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

describe("the first screen of `npm start`", { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "fleetgate-first-screen-"));
  const env = { DATA_DIR: join(dir, "data"), DATABASE_URL: "", ADMIN_PASSWORD: "" };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("on a terminal: readable log lines and a banner with the URLs, the database, the password and the next step", async () => {
    const server = serveOnTerminal(env);
    try {
      await server.ready;
      const screen = server.screen();
      const api = /API\s+(http:\/\/127\.0\.0\.1:\d+)\/v6\//.exec(screen)?.[1];
      expect(api, screen).toBeDefined();
      expect(screen).toContain(`GraphiQL  ${api}/graphql`);
      expect(screen).toContain(`Database  embedded (PGlite), in ${join(dir, "data")}`);
      expect(screen).toMatch(/Created the admin user 'admin' with password: \S{20,}/);
      expect(screen).toContain("Admin     'admin': its password is printed above, this once");
      expect(screen).toContain("Next      npm run seed");
      // Log lines read as text, not JSON.
      expect(screen).toMatch(/\d\d:\d\d:\d\d\] INFO: Server listening at http:\/\/127\.0\.0\.1:\d+/);
      expect(screen).not.toMatch(/^\{"level"/m);
      // The first start said what it did as it went (issue 31).
      const steps = [
        "creating the embedded database in",
        "first start: applying",
        "first start: creating the admin user 'admin'",
        "first start: loading the shipped device-type catalogue",
        "Server listening at",
      ].map((step) => screen.indexOf(step));
      expect(
        steps.every((index) => index >= 0),
        screen,
      ).toBe(true);
      expect(steps).toEqual([...steps].sort((a, b) => a - b));
      // A request's line ends with its id, the one a client or a 500's body quotes (issue 31).
      const ping = await fetch(`${api}/ping`, { headers: { "x-request-id": "first-screen-ping" } });
      expect(ping.status).toBe(200);
      await expect
        .poll(() => server.screen(), { timeout: 10_000 })
        .toMatch(/INFO: GET \/ping 200 [\d.]+ ms 0 SQL \[first-screen-ping\]/);
      await fetch(`${api}/ping`);
      await expect
        .poll(() => server.screen(), { timeout: 10_000 })
        .toMatch(/INFO: GET \/ping 200 [\d.]+ ms 0 SQL \[[0-9a-f]{8}-[0-9a-f-]{27}\]/);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // The second start names where the password was, and does not print it again.
    const again = serveOnTerminal(env);
    try {
      await again.ready;
      expect(again.screen()).not.toMatch(/Created the admin user/);
      expect(again.screen()).toContain("'admin': its password was printed when this database first started");
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });

  it("elsewhere (CI, tests, log shippers): JSON lines only, and no banner", async () => {
    const server = await startServer(env);
    try {
      await fetch(`${server.url}/ping`);
      await expect.poll(() => server.stdout(), { timeout: 10_000 }).toMatch(/"url":"\/ping"/);
    } finally {
      await server.stop();
    }
    const lines = server.stdout().trim().split("\n");
    for (const line of lines) expect(JSON.parse(line), line).toMatchObject({ service: "fleetgate" });
    expect(server.stdout()).not.toContain("Ctrl-C stops it.");
  });
});
