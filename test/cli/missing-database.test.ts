import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, inject, it } from "vitest";
import { withDatabase } from "../support/global-setup.ts";

// Issue 31: a DATABASE_URL naming a database that does not exist says so, and how to fix it, rather
// than "could not get a database connection". PostgreSQL only: the embedded database makes its own.

const bin = fileURLToPath(new URL("../../bin/fleetgate.js", import.meta.url));
const run = promisify(execFile);
const postgres = inject("postgres");

describe.each(postgres ? [postgres.serverUrl] : [])(
  "a DATABASE_URL whose database does not exist",
  (serverUrl) => {
    const name = `fg_missing_${randomBytes(4).toString("hex")}`;
    const databaseUrl = withDatabase(serverUrl, name);
    const host = new URL(serverUrl);

    it.each([
      ["migrate"],
      ["serve"],
      ["user", "add", "zoe", "--email", "zoe@example.com", "--password", "zoe-password"],
    ])("fleetgate %s names the database and what to do", async (...args) => {
      const failed = run(process.execPath, [bin, ...args], {
        env: { ...process.env, DATABASE_URL: databaseUrl, PORT: "0", LOG_LEVEL: "silent" },
        timeout: 60_000,
      });
      await expect(failed).rejects.toMatchObject({
        code: 1,
        stderr: `fleetgate ${args[0]}: PostgreSQL at ${host.hostname}:${host.port || "5432"} has no database "${name}" (DATABASE_URL): create it (\`createdb ${name}\`, or CREATE DATABASE), or point DATABASE_URL at one that exists\n`,
      });
    });
  },
);
