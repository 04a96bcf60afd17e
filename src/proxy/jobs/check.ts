import type { Permissions } from "../../auth/permissions.ts";
import { cancelForSender } from "../../core/job-lifecycle/cancel.ts";
import { type Claim, claimResults } from "../../core/job-lifecycle/claim.ts";
import type { Database } from "../../db/database.ts";
import type { Model } from "../../model/types.ts";
import { findWritableDevices, type TargetDevice } from "../targets.ts";
import { senderPermissions } from "./sender.ts";
import type { ResultWriter } from "./writer.ts";

// Which of a job's claimed devices may be called: read again, through the planner, under the
// sender's rights as they are now (DESIGN.md, "Later is now"), never with more rights than theirs.

export interface CheckDeps {
  readonly db: Database;
  readonly model: Model;
  readonly writer: ResultWriter;
}

/** A claimed device its sender may write, as read at `checkedAt` (Date.now()). */
export interface Call {
  readonly claim: Claim;
  readonly device: TargetDevice;
  readonly checkedAt: number;
}

export type Checked =
  | { readonly kind: "callable"; readonly calls: Call[] }
  /** The sender may send nothing any more: the rest of the job was cancelled. */
  | { readonly kind: "sender gone" };

const NOT_FOUND = 404;
// A device its sender may no longer write is skipped with this error, never called.
const FORBIDDEN = "forbidden";

/**
 * The claimed devices the sender may write now. One they may no longer write is skipped, one
 * deleted since fails (404): neither is called. A sender who may send nothing any more cancels the
 * rest of the job, these claims and the caller's other claims not called yet (`takeWaiting` hands
 * them over, so none of them is called meanwhile) included.
 */
export async function checkClaims(
  job: number,
  claims: readonly Claim[],
  permissions: Permissions | undefined,
  deps: CheckDeps,
  takeWaiting: () => readonly number[] = () => [],
): Promise<Checked> {
  if (!permissions) {
    const taken = [...claims.map((claim) => claim.id), ...takeWaiting()];
    await cancelForSender(deps.db, job, taken);
    return { kind: "sender gone" };
  }
  const checkedAt = Date.now();
  const writable = await findWritableDevices(
    claims.flatMap((claim) => (claim.device === null ? [] : [claim.device])),
    { db: deps.db, model: deps.model, permissions },
  );
  const calls: Call[] = [];
  for (const claim of claims) {
    const device = claim.device === null ? undefined : writable.get(claim.device);
    if (device) calls.push({ claim, device, checkedAt });
    else if (claim.device === null) {
      deps.writer.add(job, {
        id: claim.id,
        status: "failed",
        statusCode: NOT_FOUND,
        body: null,
        error: "The device no longer exists",
      });
    } else {
      deps.writer.add(job, {
        id: claim.id,
        status: "skipped",
        statusCode: null,
        body: null,
        error: FORBIDDEN,
      });
    }
  }
  return { kind: "callable", calls };
}

/** Reads calls checked a while ago again (a lane's devices waiting for a slot). */
export async function checkAgain(
  job: number,
  calls: readonly Call[],
  deps: CheckDeps,
  takeWaiting?: () => readonly number[],
): Promise<Checked> {
  return checkClaims(
    job,
    calls.map((call) => call.claim),
    await senderPermissions(deps.db, job),
    deps,
    takeWaiting,
  );
}

/**
 * Claims up to `count` of the job's devices with ids above `after` (core/job-lifecycle/claim.ts
 * claimResults) and checks them. `claimed`: how many were claimed, callable or not (0: none is left
 * to claim now); `last`: the highest id claimed.
 */
export async function claimDevices(
  job: number,
  { count, after }: { readonly count: number; readonly after: number },
  leaseSeconds: number,
  deps: CheckDeps,
  takeWaiting: () => readonly number[],
): Promise<{ readonly claimed: number; readonly last: number; readonly checked: Checked }> {
  // The sender's rights are read beside the claim, not after it: one round trip less per chunk.
  const [{ claimed, cancelled }, permissions] = await Promise.all([
    claimResults(deps.db, job, count, leaseSeconds, after),
    senderPermissions(deps.db, job),
  ]);
  if (claimed.length === 0) return { claimed: 0, last: after, checked: { kind: "callable", calls: [] } };
  const last = Math.max(...claimed.map((claim) => claim.id));
  // Only a claim its worker abandoned can be taken after a cancel: it is not called.
  if (cancelled) {
    for (const { id } of claimed) {
      deps.writer.add(job, { id, status: "skipped", statusCode: null, body: null, error: undefined });
    }
    return { claimed: claimed.length, last, checked: { kind: "callable", calls: [] } };
  }
  return {
    claimed: claimed.length,
    last,
    checked: await checkClaims(job, claimed, permissions, deps, takeWaiting),
  };
}
