import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoLogin, seedDemo } from "../../src/seed/demo.ts";
import { expectAccessible, launchChromium, signIn } from "../support/console/console-browser.ts";
import { SETUP_TIMEOUT_MS } from "../support/demo-server.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { startFleet, stopFleet } from "../support/supervisor/fleet.ts";

// Issue 48 item 5: a command from the console to a fleet of simulated devices (real `fleetgate
// fleet` processes) runs as a job whose progress bar moves, by the commandJob subscription, to its
// end, and then lists each device's result; a destructive command asks first.

const DEVICES = 3;

describe("commands from the console", () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let fleet: number;
  let stop: (() => Promise<unknown>) | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), "fleetgate-console-fleet-"));

  beforeAll(async () => {
    server = await startTestServer("embedded", { DEVICE_OFFLINE_TIMEOUT: "3600" });
    await seedDemo(server.test.db);
    const demoOrg = await server.test.db.prisma.organization.findUniqueOrThrow({ where: { handle: "demo" } });
    const created = await server.app.inject({
      method: "POST",
      url: "/v6/application",
      payload: { app_name: "lab-fleet", device_type: "raspberrypi4-64", organization: demoOrg.id },
    });
    expect(created.statusCode, created.body).toBe(201);
    fleet = (JSON.parse(created.body) as { id: number }).id;
    const key = JSON.parse(
      (await server.app.inject({ method: "POST", url: `/api-key/application/${fleet}/provisioning` })).body,
    ) as string;
    const args = ["--api", server.url, "--provisioning-key", key, "--fleet", String(fleet)];
    const started = await startFleet(
      [...args, "--devices", String(DEVICES), "--data-dir", dataDir, "--heartbeat-interval", "1"],
      DEVICES,
    );
    stop = () => stopFleet(started.child);
    const deadline = Date.now() + 30_000;
    while (
      (await server.test.db.prisma.device.count({
        where: { belongs_to__application: fleet, is_online: true, supervisor_api_port: { not: null } },
      })) < DEVICES
    ) {
      if (Date.now() > deadline) throw new Error("the simulated devices did not report");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    await signIn(page, server.url, demoLogin.username, demoLogin.password);
  }, SETUP_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await stop?.();
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The progress bar's values each time they change, until it reaches its end. */
  async function progressUntilDone(expected: number): Promise<string[]> {
    const bar = page.getByRole("progressbar", { name: "Devices done" });
    await bar.waitFor();
    const seen: string[] = [];
    await expect
      .poll(
        async () => {
          const value = `${await bar.getAttribute("aria-valuenow")}/${await bar.getAttribute("aria-valuemax")}`;
          if (seen.at(-1) !== value) seen.push(value);
          return value;
        },
        { timeout: 30_000, interval: 50 },
      )
      .toBe(`${expected}/${expected}`);
    return seen;
  }

  it("blinks a whole fleet: the progress bar reaches its end, then each device's result", async () => {
    await page.goto(`${server.url}/console/#/commands/${fleet}`);
    await page.getByRole("heading", { level: 1, name: "Commands" }).waitFor();
    await expect.poll(() => page.getByLabel("Fleet", { exact: true }).inputValue()).toBe(String(fleet));
    await expectAccessible(page);
    await page.getByLabel("Command", { exact: true }).selectOption("blink");
    await page.getByRole("button", { name: "Send" }).click();
    const seen = await progressUntilDone(DEVICES);
    expect(seen.at(-1)).toBe(`${DEVICES}/${DEVICES}`);
    const results = page.getByTestId("job-results");
    await expect.poll(() => results.locator("tbody tr").count()).toBe(DEVICES);
    expect(await results.locator("tbody td:nth-child(2)").allTextContents()).toEqual(
      Array(DEVICES).fill("ok"),
    );
    expect(await page.getByTestId("job-status").textContent()).toMatch(
      /3 succeeded, 0 failed, 0 skipped\. Finished \(succeeded\)/,
    );
    const past = page.getByTestId("past-jobs");
    await expect.poll(() => past.locator("tbody tr").first().textContent()).toMatch(/\/v1\/blink.*succeeded/);
    await expectAccessible(page);
  });

  it("asks before a reboot of chosen devices, and runs it only when confirmed", async () => {
    await page.getByLabel("the devices I choose").check();
    const boxes = page.getByRole("group", { name: "Online devices" }).getByRole("checkbox");
    await expect.poll(() => boxes.count()).toBe(DEVICES);
    await boxes.nth(0).check();
    await boxes.nth(1).check();
    await page.getByLabel("Command", { exact: true }).selectOption("reboot");
    await page.getByRole("button", { name: "Send" }).click();
    const dialog = page.getByRole("alertdialog", { name: "Confirm: Reboot" });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain("This reboots 2 chosen devices of lab-fleet");
    await expectAccessible(page);
    const jobsBefore = await server.test.db.prisma.commandJob.count();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    expect(await dialog.count()).toBe(0);
    expect(await server.test.db.prisma.commandJob.count()).toBe(jobsBefore);

    await page.getByRole("button", { name: "Send" }).click();
    await page.getByRole("button", { name: "Yes, reboot" }).click();
    await progressUntilDone(2);
    const results = page.getByTestId("job-results");
    await expect.poll(() => results.locator("tbody tr").count()).toBe(2);
    expect(await results.locator("tbody td:nth-child(3)").allTextContents()).toEqual(["202", "202"]);
    expect(await server.test.db.prisma.commandJob.count()).toBe(jobsBefore + 2);
  });
});
