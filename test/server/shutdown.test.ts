import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds, freshDatabase } from "../support/databases.ts";
import { startServer } from "../support/processes.ts";

// Issue 21: on SIGTERM `fleetgate serve` answers /readyz with 503 at once and keeps serving for
// SHUTDOWN_DELAY, so a balancer takes it out of rotation; then it drains, and a request still
// open after SHUTDOWN_GRACE does not keep the process alive.

describe.each(databaseKinds)("stopping fleetgate serve on %s", (kind) => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    if (kind === "embedded") {
      const dir = mkdtempSync(join(tmpdir(), "fleetgate-shutdown-"));
      env = { DATA_DIR: dir, DATABASE_URL: "" };
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    } else {
      const test = await freshDatabase(kind);
      await test.db.close();
      env = { DATABASE_URL: test.url ?? "" };
      cleanup = () => test.drop().catch(() => {});
    }
  });
  afterAll(() => cleanup());

  it("says 503 on /readyz during SHUTDOWN_DELAY while still serving, then exits 0", async () => {
    const server = await startServer({ ...env, SHUTDOWN_DELAY: "2", LOG_LEVEL: "info" });
    try {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      const exited = server.stop();
      const sent = Date.now();
      // Within the delay: not ready, but alive and answering.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.text()).toBe("stopping");
      expect((await fetch(`${server.url}/ping`)).status).toBe(200);
      expect(await exited).toBe(0);
      expect(Date.now() - sent).toBeGreaterThanOrEqual(2_000);
      expect(server.stdout()).toContain('"msg":"stopping: /readyz answers 503"');
    } finally {
      server.child.kill("SIGKILL");
    }
  });

  it("closes a request still open after SHUTDOWN_GRACE, and exits", async () => {
    const server = await startServer({ ...env, SHUTDOWN_GRACE: "1" });
    try {
      const { port } = new URL(server.url);
      // A request whose body never finishes: in flight until the server gives up on it.
      const socket = connect(Number(port), "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      socket.write(
        "POST /login_ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
      );
      const closed = new Promise((resolve) => socket.once("close", resolve));
      socket.on("error", () => {});
      await new Promise((resolve) => setTimeout(resolve, 200));
      const sent = Date.now();
      const code = await server.stop();
      const took = Date.now() - sent;
      await closed;
      expect(code).toBe(0);
      expect(took).toBeGreaterThanOrEqual(900);
      expect(took).toBeLessThan(10_000);
      expect(server.stdout()).toContain("grace over");
    } finally {
      server.child.kill("SIGKILL");
    }
  });
});
