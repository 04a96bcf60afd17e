// `npm run screenshots:console`: the README's pictures of the console (docs/console/*.png), taken in
// Debian's headless Chromium (CHROMIUM_PATH, default /usr/bin/chromium) from a real `fleetgate
// serve` on a fresh embedded database with the demo data and a fleet of four simulated devices.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Page } from "playwright-core";

const root = fileURLToPath(new URL("../", import.meta.url));
const out = join(root, "docs/console");
const data = mkdtempSync(join(tmpdir(), "fleetgate-screenshots-"));
const env = {
  ...process.env,
  DATA_DIR: join(data, "db"),
  ADMIN_PASSWORD: "admin-password",
  LOG_LEVEL: "info",
};
const children: ChildProcess[] = [];

/** Runs `fleetgate <args>`; resolves with its stdout once `ready` finds what it waits for. */
function fleetgate(args: string[], ready: (stdout: string) => string | undefined): Promise<string> {
  const child = spawn(process.execPath, [join(root, "bin/fleetgate.js"), ...args], { env });
  children.push(child);
  let stdout = "";
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      const found = ready(stdout);
      if (found !== undefined) resolve(found);
    });
    child.stderr.on("data", (chunk) => process.stderr.write(chunk));
    child.once("exit", (code) => reject(new Error(`fleetgate ${args[0]} exited with ${code}`)));
  });
}

async function api(url: string, path: string, token: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.waitForTimeout(400);
  await page.screenshot({ path: join(out, `${name}.png`), fullPage: true });
  process.stdout.write(`docs/console/${name}.png\n`);
}

try {
  mkdirSync(out, { recursive: true });
  const url = await fleetgate(
    ["serve"],
    (s) => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(s)?.[1],
  );
  await new Promise<void>((resolve, reject) => {
    const seed = spawn(process.execPath, [join(root, "bin/fleetgate.js"), "seed", "--demo"], {
      env,
      stdio: "ignore",
    });
    seed.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`seed exited with ${code}`))));
  });
  const login = await fetch(`${url}/login_`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: "admin-password" }),
  });
  const admin = await login.text();
  const orgs = (await api(url, "/v6/organization?$filter=handle%20eq%20'demo'", admin)) as {
    d: { id: number }[];
  };
  const organization = orgs.d[0]?.id;
  const fleet = (await api(url, "/v6/application", admin, {
    app_name: "lab-fleet",
    device_type: "raspberrypi4-64",
    organization,
  })) as { id: number };
  const key = (await api(url, `/api-key/application/${fleet.id}/provisioning`, admin, {})) as string;
  const fleetArgs = ["--api", url, "--provisioning-key", key, "--fleet", String(fleet.id), "--devices", "4"];
  await fleetgate(
    ["fleet", ...fleetArgs, "--json", "--data-dir", join(data, "fleet"), "--heartbeat-interval", "2"],
    (s) => (s.split("\n").filter(Boolean).length >= 4 ? "ready" : undefined),
  );
  await new Promise((resolve) => setTimeout(resolve, 3000));

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-sync",
    ],
  });
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
  await page.goto(`${url}/console/`);
  await page.getByLabel("Username or e-mail").fill("demo");
  await shoot(page, "sign-in");
  await page.getByLabel("Password", { exact: true }).fill("demo-password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByTestId("status-chart").waitFor();
  await shoot(page, "fleets");
  await page.getByRole("link", { name: "smart-lights", exact: true }).click();
  await page.getByTestId("devices").waitFor();
  await shoot(page, "fleet");
  // A simulated device: it has reported, so its page shows a stored history of status changes.
  const devices = (await api(
    url,
    `/v6/device?$select=id&$filter=belongs_to__application%20eq%20${fleet.id}&$orderby=id%20asc&$top=1`,
    admin,
  )) as { d: { id: number }[] };
  await page.goto(`${url}/console/#/devices/${devices.d[0]?.id}`);
  await page.getByTestId("device-state").waitFor();
  await shoot(page, "device");
  await page.goto(`${url}/console/#/commands/${fleet.id}`);
  await page.getByLabel("Command", { exact: true }).selectOption("blink");
  await page.getByRole("button", { name: "Send" }).click();
  await page.getByTestId("job-results").waitFor({ timeout: 30_000 });
  await shoot(page, "commands");
  await page.goto(`${url}/console/#/keys`);
  await page.getByLabel("Name").fill("ci-deploy");
  await page.getByLabel("Description").fill("deploys from CI");
  await page.getByRole("button", { name: "Create key" }).click();
  await page.getByTestId("new-key").waitFor();
  await shoot(page, "keys");
  await browser.close();
} finally {
  for (const child of children.reverse()) if (child.exitCode === null) child.kill("SIGTERM");
  await new Promise((resolve) => setTimeout(resolve, 1500));
  rmSync(data, { recursive: true, force: true });
}
