import type { FastifyInstance } from "fastify";
import type { Database } from "../db/database.ts";
import { newUnitOfWork, withUnitOfWork } from "../db/unit-of-work.ts";

// How long `SELECT 1` may take before the database counts as away: short, so a balancer's probe
// (typically a 2–5 s time-out) gets an answer from us rather than timing out itself.
export const READINESS_TIMEOUT_MS = 1_000;

const stopping = new WeakSet<FastifyInstance>();

/** Shutdown has begun: /readyz answers 503 from now on, whatever the database says. */
export function beginShutdown(app: FastifyInstance): void {
  stopping.add(app);
}

/**
 * `GET /readyz`, the readiness probe: 200 while the database answers `SELECT 1` within a second,
 * 503 otherwise and from the moment shutdown begins. The server listens only once its migrations
 * ran (`fleetgate serve` migrates first), so a 200 also says they did. Probes that arrive while a
 * check runs share it: a slow database gets one `SELECT 1` at a time from us, not one per probe.
 * `/ping` stays the liveness probe: it answers while the process does, database or not.
 */
export function useReadiness(app: FastifyInstance, db: Database): void {
  let check: Promise<boolean> | undefined;
  const databaseAnswers = () => {
    // The server's own statement, shared by the probes meanwhile: not counted on one probe's
    // answer, and not cancelled when one prober goes away.
    check ??= withUnitOfWork(newUnitOfWork(), () => selectOne(db)).finally(() => {
      check = undefined;
    });
    return check;
  };
  app.addHook("preClose", async () => beginShutdown(app));
  app.get("/readyz", async (_request, reply) => {
    const state = stopping.has(app)
      ? "stopping"
      : (await databaseAnswers())
        ? "ready"
        : "database unavailable";
    reply.code(state === "ready" ? 200 : 503).header("cache-control", "no-store");
    return reply.type("text/plain").send(state);
  });
}

async function selectOne(db: Database): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), READINESS_TIMEOUT_MS);
  });
  const answered = db.query({ text: "SELECT 1", values: [] }).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([answered, late]);
  } finally {
    clearTimeout(timer);
  }
}
