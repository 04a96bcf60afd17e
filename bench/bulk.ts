import { type Answer, type SerialSettings, serialPair, type Target } from "./load.ts";
import type { LatencyRow } from "./report.ts";
import { bulkPatch } from "./workloads.ts";

const FLEETS_PER_PATCH = 10;

/**
 * W3: serial bulk PATCHes of ten fleets' devices (1,000 rows) with a note that changes every time,
 * fleetgate's (filter compiled, permissions, one transaction) against the baseline's one UPDATE.
 */
export async function measureBulkPatch(
  fleetIds: readonly number[],
  devicesPerFleet: number,
  fleetgate: Target,
  baseline: Target,
  settings: SerialSettings,
  log: (message: string) => void,
): Promise<LatencyRow> {
  const expected = FLEETS_PER_PATCH * devicesPerFleet;
  const groups = Math.floor(fleetIds.length / FLEETS_PER_PATCH);
  let sequence = 0;
  const build = (index: number) => {
    const group = (index * 7) % groups;
    return bulkPatch(
      fleetIds.slice(group * FLEETS_PER_PATCH, (group + 1) * FLEETS_PER_PATCH),
      `bench ${sequence++}`,
    );
  };
  let statements = 0;
  const check = (answer: Answer) => {
    if (answer.status !== 200) throw new Error(`W3: HTTP ${answer.status}: ${answer.body.slice(0, 200)}`);
    const affected = Number(answer.headers.get("x-affected-rows"));
    if (affected !== expected) throw new Error(`W3: ${affected} rows changed, expected ${expected}`);
    const counted = answer.headers.get("x-sql-statements");
    if (counted !== null) statements = Math.max(statements, Number(counted));
  };
  const { fleetgate: ours, baseline: theirs } = await serialPair(
    fleetgate,
    baseline,
    build,
    check,
    settings,
    (mine, raw, round) => log(`W3 round ${round + 1}: ${mine.toFixed(1)} vs ${raw.toFixed(1)} ms`),
  );
  return {
    id: "W3",
    group: "W3",
    title: `bulk PATCH $filter=belongs_to__application in (…10 fleets), ${expected} rows`,
    status: "ok",
    fleetgate: ours,
    baseline: theirs,
    ratio: ours.p50Ms / theirs.p50Ms,
    statements,
  };
}
