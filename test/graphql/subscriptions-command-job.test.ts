import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDefaultCatalogue } from "../../src/catalogue/defaults.ts";
import { databaseKinds } from "../support/databases.ts";
import { type Subscription, subscribe } from "../support/graphql/graphql-subscriptions.ts";
import { injectJson, type Method } from "../support/inject-json.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { startFleet } from "../support/supervisor/fleet.ts";

// Issue 23, item 4: `commandJob(id)` streams a job's progress from submission to its final status,
// over SSE on a real socket, while real simulated devices answer the command one at a time; the
// stream completes by itself, and a caller who may not read the job gets NOT_FOUND.

interface JobEvent {
  commandJob: { id: number; status: string; targetedCount: number; doneCount: number; okCount: number };
}

const DEVICES = 3;

describe.each(databaseKinds)("the commandJob subscription on %s", (kind) => {
  let server: TestServer;
  let token: string;
  let otherToken: string;
  let fleet: number;
  const base = mkdtempSync(join(tmpdir(), `fleetgate-job-subscription-${kind}-`));
  const processes: ChildProcess[] = [];
  const streams: Subscription<unknown>[] = [];

  const send = (method: Method, url: string, payload?: unknown, bearer?: string, headers = {}) =>
    injectJson(server, method, url, payload, {
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...headers,
    });

  async function login(name: string): Promise<string> {
    const password = `${name}-password`;
    const user = await send("POST", "/v6/user", { username: name, email: `${name}@example.com`, password });
    expect(user.status, user.raw).toBe(201);
    const session = await send("POST", "/login_", { username: name, password });
    expect(session.status, session.raw).toBe(200);
    return session.raw;
  }

  beforeAll(async () => {
    // One device at a time, each answering after a second: the job moves in visible steps.
    server = await startTestServer(kind, {
      COMMAND_JOB_BATCH_SIZE: "1",
      COMMAND_JOB_CONCURRENCY: "1",
      DEVICE_OFFLINE_TIMEOUT: "3600",
    });
    await loadDefaultCatalogue(server.test.db);
    token = await login("carol");
    otherToken = await login("dave");
    const created = await send(
      "POST",
      "/v6/application",
      { app_name: "carol-fleet", device_type: "raspberrypi4-64" },
      token,
    );
    expect(created.status, created.raw).toBe(201);
    fleet = (created.body as { id: number }).id;
    const key = await send("POST", `/api-key/application/${fleet}/provisioning`, undefined, token);
    const started = await startFleet(
      [
        ...["--api", server.url, "--provisioning-key", key.body as string, "--fleet", String(fleet)],
        ...["--devices", String(DEVICES), "--data-dir", join(base, "fleet"), "--heartbeat-interval", "1"],
        ...["--poll-interval", "5", "--delay-ms", "1000"],
      ],
      DEVICES,
    );
    processes.push(started.child);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const online = await send(
        "GET",
        `/v6/device/$count?$filter=belongs_to__application eq ${fleet} and is_online eq true`,
      );
      if (online.body === DEVICES || (online.body as { d?: number }).d === DEVICES) break;
      if (Date.now() > deadline) throw new Error(`devices not online: ${online.raw}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }, 180_000);

  afterAll(async () => {
    for (const stream of streams) stream.close();
    for (const child of processes)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await server?.close();
    rmSync(base, { recursive: true, force: true });
  }, 60_000);

  it("streams a job from submission to its final status, then completes", { timeout: 120_000 }, async () => {
    const submitted = await send("POST", "/supervisor/v1/blink", { appId: fleet }, token, {
      prefer: "respond-async",
    });
    expect(submitted.status, submitted.raw).toBe(202);
    const id = (submitted.body as { id: number }).id;

    const query =
      "subscription Job($id: Int!) { commandJob(id: $id) { id status targetedCount doneCount okCount } }";
    const progress = await subscribe<JobEvent>(server.url, token, query, { id });
    streams.push(progress as Subscription<unknown>);
    const last = await progress
      .until((r) => r.data?.commandJob.status === "succeeded", "the job succeeded")
      .catch(async (error: Error) => {
        const job = await send("GET", `/v6/command_job(${id})?$expand=command_result`, undefined, token);
        throw new Error(`${error.message}; the job reads ${job.raw}`);
      });
    expect(last.data?.commandJob).toMatchObject({
      id,
      targetedCount: DEVICES,
      doneCount: DEVICES,
      okCount: DEVICES,
    });
    // The stream completes by itself after the final status.
    await progress.finished;
    expect(progress.completed()).toBe(true);
    // Progress only moves forward, and more than one step of it was seen.
    const done = progress.results.map((r) => r.data?.commandJob.doneCount ?? -1);
    expect(done).toEqual([...done].sort((a, b) => a - b));
    expect(progress.results.length).toBeGreaterThan(1);
    expect(progress.results.filter((r) => r.errors)).toEqual([]);

    const stranger = await subscribe<JobEvent>(server.url, otherToken, query, { id });
    streams.push(stranger as Subscription<unknown>);
    const refused = await stranger.until((r) => r.errors !== undefined, "an error");
    expect(refused.errors?.[0]?.extensions?.code).toBe("NOT_FOUND");
  });
});
