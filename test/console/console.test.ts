import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoLogin } from "../../src/seed/demo.ts";
import { expectAccessible, launchChromium, signIn } from "../support/console/console-browser.ts";
import { SETUP_TIMEOUT_MS, useDemoServer } from "../support/demo-server.ts";

// The console in a real headless Chromium against a real server on the demo data (issue 48), and
// the trust rule of issue 45 item 6: what the API says is shown as text, never run.

const json = (body: string) => JSON.parse(body) as unknown;

describe("the console in a browser", () => {
  const demo = useDemoServer("embedded");
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const url = () => demo.server.url;

  beforeAll(async () => {
    browser = await launchChromium();
  }, SETUP_TIMEOUT_MS);
  afterAll(() => browser?.close());

  async function freshPage(): Promise<Page> {
    const context = await browser.newContext();
    const next = await context.newPage();
    next.on("pageerror", (error) => pageErrors.push(error.message));
    return next;
  }
  async function demoToken(): Promise<string> {
    const response = await fetch(`${url()}/login_`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(demoLogin),
    });
    return response.text();
  }
  async function demoUserId(): Promise<number> {
    return (await demo.prisma().user.findUniqueOrThrow({ where: { username: demoLogin.username } })).id;
  }
  async function fleetId(name: string): Promise<number> {
    return (await demo.prisma().application.findFirstOrThrow({ where: { app_name: name } })).id;
  }

  it("signs the demo user in and shows the demo fleets with their status chart", async () => {
    page = await freshPage();
    await signIn(page, url(), demoLogin.username, demoLogin.password);
    const fleets = page.getByTestId("fleets");
    for (const name of ["smart-lights", "weather-stations", "kiosks"])
      await expect.poll(() => fleets.getByRole("link", { name, exact: true }).count()).toBe(1);
    const chart = page.getByTestId("status-chart");
    expect(await chart.getAttribute("role")).toBe("img");
    expect(await chart.getAttribute("aria-label")).toMatch(/^Devices by status in 3 fleets: \d+ online/);
    // The chart drew bars: its canvas is not blank.
    const painted = await chart.evaluate((canvas: HTMLCanvasElement) => {
      const data = canvas.getContext("2d")?.getImageData(0, 0, canvas.width, canvas.height).data ?? [];
      return data.some((value, index) => index % 4 === 3 && value > 0);
    });
    expect(painted).toBe(true);
    await expectAccessible(page);
    // The credential is in this tab's sessionStorage only.
    const stored = await page.evaluate(() => ({
      local: localStorage.length,
      cookie: document.cookie,
      session: sessionStorage.length,
    }));
    expect(stored).toEqual({ local: 0, cookie: "", session: 1 });
  });

  it("lists a fleet's devices, and a device's new status changes its row within 2 s without a reload", async () => {
    const fleet = await fleetId("smart-lights");
    await page.goto(`${url()}/console/#/fleets/${fleet}`);
    const table = page.getByTestId("devices");
    await expect.poll(() => table.locator("tbody tr").count()).toBe(20);
    expect(await table.locator("caption").textContent()).toBe("20 devices");
    await expect.poll(() => table.getByRole("link", { name: "smart-lights-02" }).count()).toBe(1);
    await expectAccessible(page);

    const device = await demo.prisma().device.findFirstOrThrow({ where: { device_name: "smart-lights-02" } });
    const key = json(
      (await demo.server.app.inject({ method: "POST", url: `/api-key/device/${device.id}/device-key` })).body,
    ) as string;
    const row = table.locator(`tr[data-device="${device.uuid}"]`);
    expect(await row.getByTestId("device-status").textContent()).not.toContain("Downloading");
    await page.evaluate(() => {
      (window as unknown as { notReloaded: boolean }).notReloaded = true;
    });
    const report = await fetch(`${url()}/device/v2/${device.uuid}/state`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ status: "Downloading", download_progress: 42 }),
    });
    expect(report.status).toBe(200);
    const reported = Date.now();
    await expect
      .poll(() => row.getByTestId("device-status").textContent(), { timeout: 2_000, interval: 50 })
      .toBe("Updating (Downloading)");
    expect(Date.now() - reported).toBeLessThan(2_000);
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(
      true,
    );
  });

  it("shows a device's state, release and variables, and is accessible", async () => {
    const device = await demo.prisma().device.findFirstOrThrow({ where: { device_name: "kiosks-03" } });
    await page.goto(`${url()}/console/#/devices/${device.id}`);
    await page.getByRole("heading", { level: 1, name: "kiosks-03" }).waitFor();
    const state = page.getByTestId("device-state");
    expect(await state.textContent()).toContain(device.uuid);
    await page.getByLabel("Release to run").waitFor();
    await expectAccessible(page);
    // Pinning writes the device's release through GraphQL's updateDevice.
    const release = await demo.prisma().release.findFirstOrThrow({
      where: { belongs_to__application: device.belongs_to__application, semver: "1.0.0" },
    });
    await page.getByLabel("Release to run").selectOption(String(release.id));
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    const pinned = await demo.prisma().device.findUniqueOrThrow({ where: { id: device.id } });
    expect(pinned.should_be_running__release).toBe(release.id);
    // The device's stored history is shown, newest first; a status the device reports while the
    // page is open is stored and appears at its top, without a reload.
    const history = page.getByTestId("history");
    const rows = history.locator("tbody tr[data-change]");
    const before = await rows.count();
    const newest = async () => (await rows.first().locator("td").allTextContents()).slice(1).join(" → ");
    const key = json(
      (await demo.server.app.inject({ method: "POST", url: `/api-key/device/${device.id}/device-key` })).body,
    ) as string;
    const report = (body: object) =>
      fetch(`${url()}/device/v2/${device.uuid}/state`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    // The demo has kiosks-03 downloading: it finishes, then downloads again.
    expect(device.status).toBe("Downloading");
    expect((await report({ status: "Idle", download_progress: null })).status).toBe(200);
    await expect.poll(() => rows.count(), { timeout: 5_000 }).toBe(before + 1);
    expect(await newest()).toBe("Updating → Online");
    await expectAccessible(page);
    expect((await report({ status: "Downloading", download_progress: 7 })).status).toBe(200);
    await expect.poll(() => rows.count(), { timeout: 5_000 }).toBe(before + 2);
    expect(await newest()).toBe("Online → Updating");
    // What a reload reads is what the page showed: the history is stored, not the page's own.
    const shown = await rows.allTextContents();
    await page.reload();
    await expect.poll(() => rows.allTextContents()).toEqual(shown);
  });

  it("renders hostile names, tags and variables as text: nothing runs", async () => {
    const device = await demo.prisma().device.findFirstOrThrow({ where: { device_name: "kiosks-04" } });
    const fleet = await fleetId("kiosks");
    const hostile = `<img src=x onerror="window.__xss=1">`;
    const patch = await demo.server.app.inject({
      method: "PATCH",
      url: `/v6/device(${device.id})`,
      payload: { device_name: hostile },
    });
    expect(patch.statusCode).toBe(200);
    for (const [url, payload] of [
      ["/v6/device_tag", { device: device.id, tag_key: "javascript:window.__xss=2", value: hostile }],
      [
        "/v6/device_environment_variable",
        { device: device.id, name: "LINK", value: "javascript:window.__xss=3" },
      ],
      [
        "/v6/application_environment_variable",
        { application: fleet, name: "NOTE", value: `<script>window.__xss=4</script>` },
      ],
    ] as const)
      expect((await demo.server.app.inject({ method: "POST", url, payload })).statusCode).toBe(201);

    await page.goto(`${url()}/console/#/fleets/${fleet}`);
    const link = page.getByTestId("devices").getByRole("link", { name: hostile });
    await expect.poll(() => link.count()).toBe(1);
    // The fleet and its devices are two queries; the fleet's may still show the page's cached
    // copy (cache-and-network) a moment after the devices' answer came in.
    await expect.poll(() => page.getByText("<script>window.__xss=4</script>").count()).toBe(1);
    await link.click();
    await page.getByRole("heading", { level: 1, name: hostile }).waitFor();
    await page.getByText("javascript:window.__xss=2").waitFor();
    await page.getByText("javascript:window.__xss=3").waitFor();
    expect(await page.locator("main img, main script, main a[href^='javascript']").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
  });

  it("serves the page with a Content-Security-Policy that forbids inline script", async () => {
    const response = await fetch(`${url()}/console/`, { headers: { accept: "text/html" } });
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toMatch(/(^|; )script-src 'self'(;|$)/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    // The browser enforces it: an inline script put into the page does not run.
    const blocked = await page.evaluate(() => {
      const script = document.createElement("script");
      script.textContent = "window.__inline = 1";
      document.body.append(script);
      return (window as unknown as { __inline?: number }).__inline;
    });
    expect(blocked).toBeUndefined();
  });

  it("creates an API key, shows it once, and signs in with it", async () => {
    await page.goto(`${url()}/console/#/keys`);
    await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor();
    await page.getByLabel("Name").fill("console test key");
    await page.getByRole("button", { name: "Create key" }).click();
    const shown = (await page.getByTestId("new-key").textContent()) ?? "";
    expect(shown).toMatch(/^[0-9a-f]{32}$/);
    await expect.poll(() => page.getByTestId("keys").getByText("console test key").count()).toBe(1);
    await expectAccessible(page);
    await page.getByRole("button", { name: "I have copied it" }).click();
    expect(await page.getByTestId("new-key").count()).toBe(0);

    const withKey = await freshPage();
    await withKey.goto(`${url()}/console/`);
    await withKey.getByLabel("API key", { exact: true }).fill(shown);
    await withKey.getByRole("button", { name: "Use this key" }).click();
    await withKey.getByRole("heading", { level: 1, name: "Fleets" }).waitFor();
    expect(await withKey.getByText("(API key)").count()).toBe(1);
    await withKey.close();
  });

  it("sends the user back to sign in, with the reason, when their key is revoked", async () => {
    const created = await fetch(`${url()}/api-key/v1`, {
      method: "POST",
      headers: { authorization: `Bearer ${await demoToken()}`, "content-type": "application/json" },
      body: JSON.stringify({ actorType: "user", actorTypeId: await demoUserId(), name: "to revoke" }),
    });
    const key = (await created.json()) as string;
    const withKey = await freshPage();
    await withKey.goto(`${url()}/console/`);
    await withKey.getByLabel("API key", { exact: true }).fill(key);
    await withKey.getByRole("button", { name: "Use this key" }).click();
    await withKey.getByTestId("fleets").waitFor();

    const row = await demo.prisma().apiKey.findFirstOrThrow({ where: { name: "to revoke" } });
    const revoked = await demo.server.app.inject({ method: "DELETE", url: `/v6/api_key(${row.id})` });
    expect(revoked.statusCode).toBe(200);
    // The fleets page's live subscription ends with UNAUTHENTICATED within 5 s of the revocation.
    const reason = withKey.getByTestId("signed-out-reason");
    await reason.waitFor({ timeout: 15_000 });
    expect(await reason.textContent()).toMatch(/^You were signed out\. .*revoked/);
    await withKey.getByRole("heading", { level: 1, name: "Sign in to fleetgate" }).waitFor();
    expect(await withKey.evaluate(() => sessionStorage.length)).toBe(0);
    await expectAccessible(withKey);
    await withKey.close();
  });

  it("shows another organization's user none of the demo fleets", async () => {
    const created = await demo.server.app.inject({
      method: "POST",
      url: "/v6/user",
      payload: { username: "outsider", email: "outsider@example.com", password: "outsider-password" },
    });
    expect(created.statusCode).toBe(201);
    const outsider = await freshPage();
    await signIn(outsider, url(), "outsider", "outsider-password");
    await outsider.getByText("You have no fleets yet.").waitFor();
    expect(await outsider.getByText("smart-lights").count()).toBe(0);
    await outsider.goto(`${url()}/console/#/fleets/${await fleetId("smart-lights")}`);
    await outsider.getByText(/^No fleet \d+ that you can see\.$/).waitFor();
    expect(await outsider.getByTestId("devices").count()).toBe(0);
    const device = await demo.prisma().device.findFirstOrThrow({ where: { device_name: "kiosks-03" } });
    await outsider.goto(`${url()}/console/#/devices/${device.id}`);
    await outsider.getByText(`No device ${device.id} that you can see.`).waitFor();
    expect(await outsider.getByTestId("history").count()).toBe(0);
    await outsider.close();
  });

  it("forgets the credential when the user signs out", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { level: 1, name: "Sign in to fleetgate" }).waitFor();
    expect(await page.evaluate(() => sessionStorage.length + localStorage.length)).toBe(0);
    expect(await page.getByTestId("signed-out-reason").count()).toBe(0);
    await expectAccessible(page);
    expect(pageErrors).toEqual([]);
  });
});
