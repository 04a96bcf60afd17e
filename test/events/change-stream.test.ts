import { describe, expect, it } from "vitest";
import { ServiceUnavailable } from "../../src/errors.ts";
import { ChangeStream } from "../../src/events/change-stream.ts";

// A subscriber's stream: bursts of notifications become few reads, memory stays bounded, and a
// client that leaves stops it at once.

function source(limitsRead?: (ids: readonly number[]) => void) {
  let push: (id: number) => void = () => {};
  let listening = false;
  const reads: number[][] = [];
  return {
    push: (id: number) => push(id),
    listening: () => listening,
    reads,
    options: {
      listen: (changed: (id: number) => void) => {
        push = changed;
        listening = true;
        return () => {
          listening = false;
        };
      },
      read: async (ids: readonly number[]) => {
        limitsRead?.(ids);
        reads.push([...ids]);
        // Odd ids are rows this subscriber may not see: they come back as nothing.
        return ids.filter((id) => id % 2 === 0).map((id) => ({ id }));
      },
    },
  };
}

describe("ChangeStream", () => {
  it("reads a burst of notifications about a few rows once, in batches, skipping what the read leaves out", async () => {
    const changes = source();
    const stream = new ChangeStream(changes.options, { batch: 4, maxPending: 100, coalesceMs: 10 });
    for (let round = 0; round < 1000; round++) changes.push(round % 10);
    const got: number[] = [];
    for (let i = 0; i < 5; i++) got.push(((await stream.next()).value as { id: number }).id);
    expect(got.sort()).toEqual([0, 2, 4, 6, 8]);
    expect(changes.reads.flat().sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(changes.reads.every((ids) => ids.length <= 4)).toBe(true);
    await stream.return();
    expect(changes.listening()).toBe(false);
  });

  it("ends a waiting subscriber at once when its client leaves", async () => {
    const changes = source();
    const stream = new ChangeStream(changes.options);
    const waiting = stream.next();
    await stream.return();
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect(changes.listening()).toBe(false);
  });

  it("ends a subscriber that falls too far behind instead of holding its changes without bound", async () => {
    const changes = source();
    const stream = new ChangeStream(changes.options, { batch: 10, maxPending: 50, coalesceMs: 10 });
    for (let id = 0; id < 51; id++) changes.push(id);
    await expect(stream.next()).rejects.toBeInstanceOf(ServiceUnavailable);
    expect(changes.listening()).toBe(false);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
  });

  it("reads every row it may see again, page by page, when its pending ids overflow and it can scan", async () => {
    const changes = source();
    const scans: number[] = [];
    const stream = new ChangeStream(
      {
        ...changes.options,
        // Rows 1..24 exist; odd ones are hidden from this subscriber. Pages of 10 ids.
        scan: async (after: number) => {
          scans.push(after);
          const ids = Array.from({ length: 10 }, (_, i) => after + 1 + i).filter((id) => id < 25);
          return {
            rows: ids.filter((id) => id % 2 === 0).map((id) => ({ id })),
            next: ids.length < 10 ? undefined : after + 10,
          };
        },
      },
      { batch: 10, maxPending: 5, coalesceMs: 1 },
    );
    for (let id = 0; id < 8; id++) changes.push(id);
    const got: number[] = [];
    for (let i = 0; i < 12; i++) got.push(((await stream.next()).value as { id: number }).id);
    // The sixth id overflowed: the pending ids were forgotten for the scan, and the later changes
    // (6, 7) are left to the pages not yet read, which will show them.
    expect(scans).toEqual([0, 10, 20]);
    expect(got.sort((a, b) => a - b)).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24]);
    expect(changes.listening()).toBe(true);
    await stream.return();
  });

  it("stops after the last row (a command job's final status)", async () => {
    const changes = source();
    const stream = new ChangeStream({ ...changes.options, isLast: (row: { id: number }) => row.id === 4 });
    stream.first({ id: 2 });
    changes.push(4);
    expect((await stream.next()).value).toEqual({ id: 2 });
    expect((await stream.next()).value).toEqual({ id: 4 });
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    expect(changes.listening()).toBe(false);
  });
});
