import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { privateEntry, sampleCopy, setAt } from "../support/catalogue/catalogue-fixture.ts";
import { sampleCatalogue } from "../support/catalogue/sample-catalogue.ts";

const bin = fileURLToPath(new URL("../../bin/fleetgate.js", import.meta.url));
const run = promisify(execFile);

// Each test runs the CLI several times, each a process that opens the embedded database: generous
// on a loaded 2-core machine (one took over 30 s in CI).
describe("fleetgate catalogue import / export", { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "fleetgate-catalogue-"));
  const env = { ...process.env, DATA_DIR: join(dir, "data"), DATABASE_URL: "" };
  const fleetgate = (...args: string[]) =>
    run(process.execPath, [bin, ...args], { env, maxBuffer: 16 << 20 });
  const file = (name: string, json: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(json));
    return path;
  };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("imports a whole document and exports the entry list back unchanged, private entries included", async () => {
    const imported = await fleetgate(
      "catalogue",
      "import",
      file("document.json", { deviceTypes: sampleCatalogue }),
    );
    expect(JSON.parse(imported.stdout)).toEqual({ deviceTypes: sampleCatalogue.length });
    await fleetgate("catalogue", "import", file("list.json", [privateEntry]));
    const exported = await fleetgate("catalogue", "export");
    expect(JSON.parse(exported.stdout)).toEqual([...sampleCatalogue, privateEntry]);

    // What export prints imports again as it is: a round trip changes nothing.
    await fleetgate("catalogue", "import", file("exported.json", JSON.parse(exported.stdout)));
    expect((await fleetgate("catalogue", "export")).stdout).toBe(exported.stdout);
  });

  it("refuses an invalid file with the JSON path and a non-zero exit, and changes nothing", async () => {
    const before = (await fleetgate("catalogue", "export")).stdout;
    const entries = sampleCopy();
    setAt(entries, "[0].name", "renamed");
    setAt(entries, "[3].options[1].options[0].min", 1);
    await expect(
      fleetgate("catalogue", "import", file("invalid.json", { deviceTypes: entries })),
    ).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("deviceTypes[3].options[1].options[0].min: must be 10"),
    });
    const broken = join(dir, "broken.json");
    writeFileSync(broken, "{");
    await expect(fleetgate("catalogue", "import", broken)).rejects.toMatchObject({
      stderr: expect.stringContaining("broken.json is not JSON"),
    });
    expect((await fleetgate("catalogue", "export")).stdout).toBe(before);
    await expect(fleetgate("catalogue", "import")).rejects.toMatchObject({
      stderr: expect.stringMatching(
        /missing required argument 'file.json'[\s\S]*npx fleetgate catalogue import --help/,
      ),
    });
  });
});
