import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultCatalogue } from "../../src/catalogue/defaults.ts";
import { architectures } from "../../src/catalogue/entry.ts";
import { parseCatalogueFile } from "../../src/catalogue/parse-file.ts";
import type { CatalogueEntry } from "../../src/catalogue/schema.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";
import { startServer } from "../support/processes.ts";

const bin = fileURLToPath(new URL("../../bin/fleetgate.js", import.meta.url));
const shipped = new URL("../../src/catalogue/default-catalogue.json", import.meta.url);

describe("the shipped device-type catalogue", () => {
  it("is valid for `catalogue import`, real device types of every architecture", async () => {
    const entries = parseCatalogueFile(JSON.parse(readFileSync(shipped, "utf8"))).entries;
    expect(await defaultCatalogue()).toEqual(entries);
    expect(entries.length).toBeGreaterThanOrEqual(20);
    expect(new Set(entries.map((entry) => entry.arch))).toEqual(new Set(architectures));
    const bySlug = new Map(entries.map((entry) => [entry.slug, entry]));
    const facts: [string, string, CatalogueEntry["arch"]][] = [
      ["raspberry-pi", "Raspberry Pi (v1 / Zero / Zero W)", "rpi"],
      ["raspberry-pi2", "Raspberry Pi 2", "armv7hf"],
      ["raspberrypi3", "Raspberry Pi 3", "armv7hf"],
      ["raspberrypi4-64", "Raspberry Pi 4 (using 64bit OS)", "aarch64"],
      ["raspberrypi5", "Raspberry Pi 5", "aarch64"],
      ["generic-aarch64", "Generic AARCH64", "aarch64"],
      ["generic-amd64", "Generic AMD64 (x86-64)", "amd64"],
      ["intel-nuc", "Intel NUC", "amd64"],
      ["jetson-nano", "Nvidia Jetson Nano SD-CARD", "aarch64"],
      ["beaglebone-black", "BeagleBone Black", "armv7hf"],
      ["qemux86", "QEMU X86 32bit", "i386"],
      ["ts7700", "Technologic TS-7700", "armv5e"],
    ];
    for (const [slug, name, arch] of facts) expect(bySlug.get(slug), slug).toMatchObject({ name, arch });
    expect(bySlug.get("intel-nuc")?.aliases).toEqual(["intel-nuc", "nuc"]);
    expect(bySlug.get("raspberry-pi")?.aliases).toEqual(["raspberry-pi", "raspberrypi"]);
    expect(entries.filter((entry) => entry.isDefault).map((entry) => entry.slug)).toEqual([
      "raspberrypi4-64",
    ]);
  });
});

describe.each(databaseKinds)("a fresh server on %s", { timeout: 180_000 }, (kind) => {
  const dir = mkdtempSync(join(tmpdir(), "fleetgate-default-catalogue-"));
  let env: Record<string, string>;
  let test: TestDatabase | undefined;
  beforeAll(async () => {
    if (kind === "embedded") env = { DATA_DIR: join(dir, "data"), DATABASE_URL: "" };
    else {
      test = await freshDatabase(kind, { empty: true });
      await test.db.close();
      env = { DATABASE_URL: test.url ?? "" };
    }
    env.ADMIN_PASSWORD = "admin-password";
  });
  afterAll(async () => {
    await test?.drop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });

  const catalogueOf = async (url: string) => (await fetch(`${url}/device-types/v1`)).json();

  it("lists the shipped catalogue at GET /device-types/v1, without a credential", async () => {
    const server = await startServer(env);
    try {
      const listed = (await catalogueOf(server.url)) as CatalogueEntry[];
      expect(listed).toEqual(await defaultCatalogue());
      const nuc = await fetch(`${server.url}/device-types/v1/nuc`);
      expect(((await nuc.json()) as CatalogueEntry).slug).toBe("intel-nuc");
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  it("loads it once: a device type deleted or replaced afterwards stays so across restarts", async () => {
    const server = await startServer(env);
    try {
      const login = await fetch(`${server.url}/login_`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "admin", password: "admin-password" }),
      });
      const token = await login.text();
      const deleted = await fetch(`${server.url}/v6/device_type?$filter=slug eq 'ts7700'`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${token}` },
      });
      expect(deleted.status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }

    // `catalogue import` replaces an entry and adds one, while the server is stopped.
    const [nuc] = (await defaultCatalogue()).filter((entry) => entry.slug === "intel-nuc");
    const file = join(dir, `${kind}.json`);
    writeFileSync(
      file,
      JSON.stringify([
        { ...nuc, name: "Intel NUC (ours)" },
        { ...nuc, slug: "our-board", aliases: ["our-board"], name: "Our board" },
      ]),
    );
    const imported = await promisify(execFile)(process.execPath, [bin, "catalogue", "import", file], {
      env: { ...process.env, ...env },
    });
    expect(JSON.parse(imported.stdout)).toEqual({ deviceTypes: 2 });

    const again = await startServer(env);
    try {
      const listed = (await catalogueOf(again.url)) as CatalogueEntry[];
      const slugs = listed.map((entry) => entry.slug);
      expect(slugs).not.toContain("ts7700");
      expect(slugs).toContain("our-board");
      expect(listed.find((entry) => entry.slug === "intel-nuc")?.name).toBe("Intel NUC (ours)");
      expect(listed).toHaveLength((await defaultCatalogue()).length);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });
});
