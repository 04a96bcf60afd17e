import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { verifyPassword } from "../../src/auth/passwords.ts";
import { openEmbedded } from "../../src/db/embedded.ts";

const bin = fileURLToPath(new URL("../../bin/fleetgate.js", import.meta.url));
const run = promisify(execFile);

describe("fleetgate user add / org add", { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "fleetgate-cli-"));
  const env = { ...process.env, DATA_DIR: dir, DATABASE_URL: "" };
  const fleetgate = (...args: string[]) => run(process.execPath, [bin, ...args], { env });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("creates a user with a hashed password and a personal organization, and an organization with an owner", async () => {
    const user = await fleetgate(
      "user",
      "add",
      "carol",
      "--email",
      "carol@example.com",
      "--password",
      "carol-password",
    );
    expect(JSON.parse(user.stdout)).toMatchObject({ username: "carol" });
    const org = await fleetgate("org", "add", "acme", "--name", "Acme", "--owner", "carol");
    expect(JSON.parse(org.stdout)).toMatchObject({ handle: "acme" });

    const db = await openEmbedded(dir);
    try {
      const carol = await db.prisma.user.findUniqueOrThrow({
        where: { username: "carol" },
        include: { Memberships: { include: { Organization: true, Role: true } } },
      });
      expect(carol.is_admin).toBe(false);
      expect(carol.password).not.toContain("carol-password");
      expect(await verifyPassword("carol-password", carol.password)).toBe(true);
      const memberships = carol.Memberships.map((m) => [m.Organization.handle, m.Role.name]).sort();
      expect(memberships).toEqual([
        ["acme", "administrator"],
        ["carol", "administrator"],
      ]);
    } finally {
      await db.close();
    }
  });

  it("refuses bad input with the rule's message and a non-zero exit", async () => {
    await expect(
      fleetgate("user", "add", "dave", "--email", "d@example.com", "--password", "short"),
    ).rejects.toMatchObject({
      stderr: expect.stringMatching(/at least 8 characters/),
    });
    // A name or handle taken reads as such, never as PostgreSQL's text (issue 31).
    for (const [args, message] of [
      [
        ["user", "add", "carol", "--email", "c@example.com", "--password", "long-enough"],
        "fleetgate user: A user named 'carol' already exists (usernames are compared without case)\n",
      ],
      [
        ["user", "add", "Carol", "--email", "c@example.com", "--password", "long-enough"],
        "fleetgate user: A user named 'Carol' already exists (usernames are compared without case)\n",
      ],
      [
        ["user", "add", "eve", "--email", "CAROL@example.com", "--password", "long-enough"],
        "fleetgate user: A user with the e-mail address 'CAROL@example.com' already exists (compared without case)\n",
      ],
      [
        ["user", "add", "acme", "--email", "acme@example.com", "--password", "long-enough"],
        "fleetgate user: An organization with the handle 'acme' already exists; a user's personal organization takes their username as its handle\n",
      ],
      [["org", "add", "acme"], "fleetgate org: An organization with the handle 'acme' already exists\n"],
    ] as const) {
      await expect(fleetgate(...args), args.join(" ")).rejects.toMatchObject({ code: 1, stderr: message });
    }
    await expect(fleetgate("user", "add")).rejects.toMatchObject({
      stderr: expect.stringMatching(
        /required option '--email <email>' not specified[\s\S]*npx fleetgate user add --help/,
      ),
    });
  });
});
