import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import packageJson from "../../package.json" with { type: "json" };
import { type RunningServer, startServer } from "../support/processes.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);
const readmeUrl = "http://127.0.0.1:3000";

/** The README's Quick start section, as a newcomer reads it. */
function quickStart(): string {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const start = readme.indexOf("## Quick start");
  return readme.slice(start, readme.indexOf("\n## ", start + 1));
}

/** Fenced blocks in order: `sh` ones are run, a `json` one is the answer the command before shows. */
function blocks(section: string): { lang: string; text: string }[] {
  return [...section.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({
    lang: m[1] ?? "",
    text: m[2] ?? "",
  }));
}

/** Splits a shell line into words: single quotes are literal, double quotes expand `$VAR` and `\$`. */
function words(line: string, variables: Record<string, string>): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)) {
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined)
      out.push(
        m[2]
          .replace(/\\\$/g, "\u0000")
          .replace(/\$(\w+)/g, (_, v: string) => variables[v] ?? "")
          .replaceAll("\u0000", "$"),
      );
    else out.push(m[3] ?? "");
  }
  return out;
}

/** What the README's `curl` calls send, sent with fetch to the server under test. */
async function curl(args: readonly string[], base: string): Promise<Response> {
  const headers: Record<string, string> = {};
  let body: string | undefined;
  let url = "";
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (arg === "-H") {
      const [name, ...value] = (args[++i] ?? "").split(":");
      headers[(name ?? "").trim().toLowerCase()] = value.join(":").trim();
    } else if (arg === "-d") body = args[++i];
    else if (arg === "-s" || arg === "-g") continue;
    else if (arg.startsWith(readmeUrl)) url = base + arg.slice(readmeUrl.length);
    else throw new Error(`the test does not know curl's ${arg}`);
  }
  return fetch(url, { method: body === undefined ? "GET" : "POST", headers, body: body ?? null });
}

describe("the README's Quick start, in the order written, on a clean data directory", {
  timeout: 240_000,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "fleetgate-quick-start-"));
  const env = { DATA_DIR: join(dir, "data"), DATABASE_URL: "", ADMIN_PASSWORD: "" };
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("npm start, npm run seed while it runs, then the example requests answer as shown", async () => {
    const section = quickStart();
    // The npm scripts are these commands; the test runs them as npm would, with a free port.
    expect(packageJson.scripts.start).toBe(
      "MALLOC_ARENA_MAX=2 node --max-semi-space-size=16 bin/fleetgate.js serve",
    );
    expect(packageJson.scripts.seed).toBe("node bin/fleetgate.js seed --demo");
    expect(section.indexOf("npm start")).toBeLessThan(section.indexOf("npm run seed"));

    server = await startServer(env);
    expect(server.stderr()).toMatch(/Created the admin user 'admin' with password: \S+/);

    const variables: Record<string, string> = {};
    let last: { status: number; location: string | null; body: string } | undefined;
    let answered = 0;
    for (const block of blocks(section)) {
      if (block.lang === "sh") {
        for (const line of block.text.split("\n").filter((l) => l.trim())) {
          const comment = /#\s*(.*)$/.exec(line)?.[1];
          const command = line.replace(/\s+#.*$/, "").trim();
          if (command === "npm install" || command === "npm start") continue; // done: installed, and serving
          if (command === "npm run seed") {
            const seed = await run(process.execPath, ["bin/fleetgate.js", "seed", "--demo"], {
              cwd: root,
              env: { ...process.env, ...env },
            });
            expect(JSON.parse(seed.stdout)).toEqual(JSON.parse(comment ?? ""));
            continue;
          }
          const assignment = /^(\w+)=\$\((.*)\)$/.exec(command);
          const args = words(assignment?.[2] ?? command, variables);
          expect(args[0]).toBe("curl");
          const response = await curl(args.slice(1), server.url);
          last = {
            status: response.status,
            location: response.headers.get("location"),
            body: await response.text(),
          };
          if (assignment?.[1]) variables[assignment[1]] = last.body;
          if (comment !== undefined) expect(last.body).toBe(comment);
        }
      } else if (block.lang === "json") {
        if (!last) throw new Error("an answer before any request");
        // `…` stands for members whose values differ on every run (a uuid, a time).
        const shown = JSON.parse(block.text.replaceAll("…, ", "").replaceAll(", …", ""));
        const body = JSON.parse(last.body);
        if (block.text.includes("…")) expect(body).toMatchObject(shown);
        else expect(body).toEqual(shown);
        answered++;
      }
    }
    expect(variables.TOKEN).toMatch(/^ey/);
    expect(answered).toBe(3);
    // The last request is the new fleet: its status and Location as the README tells them.
    const created = /answers `(\d+) Created` with the fleet \(`Location: ([^`]+)`\)/.exec(section);
    expect(last?.status).toBe(Number(created?.[1]));
    expect(last?.location).toBe(created?.[2]);

    expect(await server.stop()).toBe(0);
    server = undefined;
  });
});
