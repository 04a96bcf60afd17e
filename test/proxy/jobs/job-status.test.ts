import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Settled, settleCommandJob } from "../../../src/core/job-lifecycle/finish.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../../support/databases.ts";

// Issue 45, item 3: a job says what happened. Its status follows its devices' outcomes by the rules
// of README "Commands as jobs": cancelled if it was cancelled; else succeeded only when every
// device answered below 400; failed when none did (each failed or was skipped); partially_failed
// for a mix. Generated: any mix of outcomes, settled in any steps, a cancel at any point.

interface JobRow {
  status: string;
  ok_count: number;
  failed_count: number;
  skipped_count: number;
  done_count: number;
  pending_count: number;
  finished: boolean;
}

/** The README's rule for a job none of whose devices is pending or running. */
function finalStatus(total: Settled, cancelled: boolean): string {
  if (cancelled) return "cancelled";
  if (total.failed + total.skipped === 0) return "succeeded";
  if (total.ok === 0) return "failed";
  return "partially_failed";
}

const outcome = fc.constantFrom("ok" as const, "failed" as const, "skipped" as const);

/** A job's devices' outcomes, in the steps they are settled in, and the step before which it is cancelled (if any). */
const runs = fc.record({
  steps: fc.array(fc.array(outcome, { minLength: 0, maxLength: 4 }), { minLength: 1, maxLength: 5 }),
  cancelAt: fc.option(fc.nat(5), { nil: undefined }),
});

describe.each(databaseKinds)("a command job's final status on %s", (kind) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await freshDatabase(kind);
  }, 60_000);
  afterAll(() => test?.drop());

  async function newJob(devices: number): Promise<number> {
    const [made] = await test.db.query<{ id: number }>({
      text: `INSERT INTO "command_job" ("is_issued_by__actor", "method", "path", "target", "targeted_count", "pending_count")
             VALUES (1, 'POST', '/v1/blink', '{}', $1::int4, $1::int4) RETURNING "id"`,
      values: [devices],
    });
    return made?.id as number;
  }

  const read = async (job: number) =>
    (
      await test.db.query<JobRow>({
        text: `SELECT "status", "ok_count", "failed_count", "skipped_count", "done_count", "pending_count",
                 "finished_at" IS NOT NULL AS finished FROM "command_job" WHERE "id" = $1::int4`,
        values: [job],
      })
    )[0] as JobRow;

  it("is what its devices' outcomes say, whatever the steps they finished in", async () => {
    await fc.assert(
      fc.asyncProperty(runs, async ({ steps, cancelAt }) => {
        const devices = steps.flat().length;
        fc.pre(devices > 0);
        const job = await newJob(devices);
        const total = { ok: 0, failed: 0, skipped: 0 };
        let cancelled = false;
        for (const [index, step] of steps.entries()) {
          // A finished job cannot be cancelled (core/write/rules/command-job.ts refuses it).
          if (index === cancelAt && total.ok + total.failed + total.skipped < devices) {
            cancelled = true;
            await test.db.query({
              text: `UPDATE "command_job" SET "cancelled_at" = now() WHERE "id" = $1::int4`,
              values: [job],
            });
          }
          const settled = {
            ok: step.filter((each) => each === "ok").length,
            failed: step.filter((each) => each === "failed").length,
            skipped: step.filter((each) => each === "skipped").length,
          };
          total.ok += settled.ok;
          total.failed += settled.failed;
          total.skipped += settled.skipped;
          const finished = await test.db.transaction((tx) => settleCommandJob(tx, job, settled));
          const done = total.ok + total.failed + total.skipped;
          const row = await read(job);
          // A step that settles no device changes nothing, and says the job did not finish now.
          expect(finished).toBe(step.length > 0 && done === devices);
          expect(row).toMatchObject({
            ok_count: total.ok,
            failed_count: total.failed,
            skipped_count: total.skipped,
            done_count: done,
            pending_count: devices - done,
            finished: done === devices,
          });
          if (done < devices) expect(row.status).toBe(done === 0 ? "queued" : "running");
          else expect(row.status).toBe(finalStatus(total, cancelled));
        }
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it("never ends succeeded when a device was skipped or failed, nor failed when one answered", async () => {
    for (const [settled, status] of [
      [{ ok: 0, failed: 0, skipped: 3 }, "failed"],
      [{ ok: 2, failed: 0, skipped: 1 }, "partially_failed"],
      [{ ok: 0, failed: 1, skipped: 2 }, "failed"],
      [{ ok: 3, failed: 0, skipped: 0 }, "succeeded"],
    ] as const) {
      const job = await newJob(settled.ok + settled.failed + settled.skipped);
      await test.db.transaction((tx) => settleCommandJob(tx, job, settled));
      expect((await read(job)).status, JSON.stringify(settled)).toBe(status);
    }
  });
});
