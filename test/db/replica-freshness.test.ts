import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ReplicaFreshness, walPosition } from "../../src/db/replica-freshness.ts";
import { lagMs } from "../../src/db/replica-health.ts";

// The rules of src/db/replica-freshness.ts against an oracle: whatever the order of writes, changes
// of rights, rounds (failed ones too), forgetting and the bound on writers, a replica allowed to
// answer a reader has replayed every write of theirs and every change of rights that ended before
// the read. Rounds sample the primary's position as late as the rules allow: when they start.

type Step =
  | { kind: "write"; actor: number; grow: number }
  | { kind: "rights"; grow: number }
  | { kind: "start" }
  | { kind: "end"; failed: boolean }
  | { kind: "forget"; behind: number }
  | { kind: "listening"; heard: boolean }
  | { kind: "read"; actor: number | undefined; behind: number };

const actor = fc.integer({ min: 1, max: 4 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("write" as const), actor, grow: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant("rights" as const), grow: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant("start" as const) }),
  fc.record({ kind: fc.constant("end" as const), failed: fc.boolean() }),
  fc.record({ kind: fc.constant("forget" as const), behind: fc.integer({ min: 0, max: 6 }) }),
  fc.record({ kind: fc.constant("listening" as const), heard: fc.boolean() }),
  fc.record({
    kind: fc.constant("read" as const),
    actor: fc.option(actor, { nil: undefined }),
    behind: fc.integer({ min: 0, max: 8 }),
  }),
);

describe("ReplicaFreshness", () => {
  it("never lets a replica answer a reader before it has replayed their writes and every change of rights", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 80 }), fc.integer({ min: 1, max: 5 }), (steps, maxWriters) => {
        const freshness = new ReplicaFreshness(maxWriters);
        freshness.listening(true);
        let primary = 0n;
        let rights = 0n;
        const written = new Map<number, bigint>();
        let round: bigint | undefined;
        let served = 0;
        for (const s of steps) {
          switch (s.kind) {
            case "write":
              primary += BigInt(s.grow);
              written.set(s.actor, primary);
              freshness.wrote(s.actor);
              break;
            case "rights":
              primary += BigInt(s.grow);
              rights = primary;
              freshness.rightsChanged();
              break;
            case "start":
              if (round !== undefined) break; // one round at a time
              freshness.startRound();
              round = primary;
              break;
            case "end":
              if (round === undefined) break;
              freshness.endRound(s.failed ? undefined : round);
              round = undefined;
              break;
            case "forget":
              freshness.forgetReplayed(primary - BigInt(s.behind));
              break;
            case "listening":
              freshness.listening(s.heard);
              break;
            case "read": {
              const replayed = primary - BigInt(s.behind);
              const required = freshness.required(s.actor);
              if (required === undefined || replayed < required) break;
              served++;
              expect(replayed).toBeGreaterThanOrEqual(rights);
              if (s.actor !== undefined) expect(replayed).toBeGreaterThanOrEqual(written.get(s.actor) ?? 0n);
            }
          }
        }
        return served >= 0;
      }),
      { numRuns: 20_000 },
    );
  });

  it("lets a replica answer once the rules allow: listening, its writes sampled and replayed", () => {
    const freshness = new ReplicaFreshness();
    expect(freshness.required(7)).toBeUndefined(); // not listening yet
    freshness.listening(true);
    expect(freshness.required(7)).toBe(0n);
    freshness.wrote(7);
    expect(freshness.required(7)).toBeUndefined(); // no position sampled after the write yet
    expect(freshness.required(8)).toBe(0n); // someone else
    freshness.startRound();
    expect(freshness.required(7)).toBeUndefined();
    freshness.endRound(100n);
    expect(freshness.required(7)).toBe(100n);
    freshness.rightsChanged();
    expect(freshness.required(8)).toBeUndefined();
    freshness.startRound();
    freshness.endRound(120n);
    expect(freshness.required(8)).toBe(120n);
    freshness.forgetReplayed(130n);
    expect(freshness.required(7)).toBe(120n); // forgotten into the floor
  });
});

describe("WAL positions and lag", () => {
  it("reads PostgreSQL's text form of a WAL position, and refuses anything else", () => {
    expect(walPosition("0/0")).toBe(0n);
    expect(walPosition("16/B374D848")).toBe((0x16n << 32n) + 0xb374d848n);
    expect(walPosition("1/0") > walPosition("0/FFFFFFFF")).toBe(true);
    expect(() => walPosition("16B374D848")).toThrow(/not a WAL position/);
  });

  it("takes a replica's lag from the newest primary sample it has replayed past", () => {
    const history = [
      { at: 1_000, position: 10n },
      { at: 2_000, position: 20n },
      { at: 3_000, position: 20n },
    ];
    expect(lagMs(history, 20n, 3_050)).toBe(50); // caught up: nothing to replay
    expect(lagMs(history, 15n, 3_050)).toBe(2_050);
    expect(lagMs(history, 9n, 3_050)).toBe(Number.POSITIVE_INFINITY);
  });
});
