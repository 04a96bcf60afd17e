import { describe, expect, it } from "vitest";
import { BadRequest, ServiceUnavailable } from "../../src/errors.ts";
import { type ChangeSource, ChangeStream, defaultLimits } from "../../src/events/change-stream.ts";

// A subscriber's stream: bursts of notifications become few reads, memory stays bounded, a client
// that leaves stops it at once, a row is sent only when what the subscriber can read of it changed,
// and a subscriber that missed notifications catches up.

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
      idOf: (row: { id: number }) => row.id,
    },
  };
}

describe("ChangeStream", () => {
  it("reads a burst of notifications about a few rows once, in batches, skipping what the read leaves out", async () => {
    const changes = source();
    const stream = new ChangeStream(changes.options, {
      ...defaultLimits,
      batch: 4,
      maxPending: 100,
      coalesceMs: 10,
    });
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
    const stream = new ChangeStream(changes.options, {
      ...defaultLimits,
      batch: 10,
      maxPending: 50,
      coalesceMs: 10,
    });
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
      { ...defaultLimits, batch: 10, maxPending: 5, coalesceMs: 1 },
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

  it("sends a row only when what the subscriber can read of it changed, not for a hidden change", async () => {
    const table = tableOf({ 1: "a", 2: "secret", [MARKER]: "start" }, [2]);
    const stream = new ChangeStream(table.source, limits);
    await stream.baseline();
    table.change(1); // notified, unchanged (a column the subscriber did not select)
    table.set(2, "still secret"); // a row it cannot read
    table.set(1, "b");
    table.set(MARKER, "end");
    expect(await untilMarker(stream)).toEqual([
      { id: 1, value: "b" },
      { id: MARKER, value: "end" },
    ]);
    await stream.return();
  });

  it("sends a row that appears to the subscriber, and again when it comes back after leaving", async () => {
    const table = tableOf({ 3: "c", [MARKER]: "start" }, [3]);
    const stream = new ChangeStream(table.source, limits);
    await stream.baseline();
    table.show(3);
    expect((await stream.next()).value).toEqual({ id: 3, value: "c" });
    table.hide(3);
    table.set(MARKER, "between");
    expect((await stream.next()).value).toEqual({ id: MARKER, value: "between" });
    table.show(3);
    expect((await stream.next()).value).toEqual({ id: 3, value: "c" });
    await stream.return();
  });

  it("catches up after missed notifications: reads everything again and sends what differs", async () => {
    const table = tableOf(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [i + 1, "v0"])), []);
    const stream = new ChangeStream(table.source, limits);
    await stream.baseline();
    // Changes nobody announced (the bus was reconnecting).
    table.quietly(() => {
      table.set(2, "v1");
      table.set(7, "v1");
      table.hide(5);
      table.set(11, "new");
    });
    table.missed();
    const got: unknown[] = [];
    for (let i = 0; i < 3; i++) got.push((await stream.next()).value);
    expect(got).toEqual([
      { id: 2, value: "v1" },
      { id: 7, value: "v1" },
      { id: 11, value: "new" },
    ]);
    // The rescan found row 5 gone: its return is news.
    table.show(5);
    expect((await stream.next()).value).toEqual({ id: 5, value: "v0" });
    await stream.return();
  });

  it("refuses to follow more rows than it may remember, rather than forget some", async () => {
    const table = tableOf(Object.fromEntries(Array.from({ length: 6 }, (_, i) => [i + 1, "v"])), []);
    const stream = new ChangeStream(table.source, { ...limits, maxRows: 5 });
    await expect(stream.baseline()).rejects.toBeInstanceOf(BadRequest);
    await stream.return();
  });
});

const MARKER = 1000;
const limits = { batch: 10, maxPending: 100, coalesceMs: 1, maxRows: 1000 };

interface Row {
  readonly id: number;
  readonly value: string;
}

/**
 * A table whose rows the test sets, some of them hidden from the subscriber, with pages of three
 * rows; each change is announced unless made `quietly`, as its writer's NOTIFY would.
 */
function tableOf(initial: Record<number, string>, hidden: readonly number[]) {
  const rows = new Map(Object.entries(initial).map(([id, value]) => [Number(id), value]));
  const invisible = new Set(hidden);
  let announce = true;
  let changed: (id: number) => void = () => {};
  let missed: () => void = () => {};
  const view = () =>
    [...rows]
      .filter(([id]) => !invisible.has(id))
      .sort(([a], [b]) => a - b)
      .map(([id, value]) => ({ id, value }));
  const change = (id: number) => {
    if (announce) changed(id);
  };
  const source: ChangeSource<Row> = {
    listen: (onChanged, _ended, onMissed) => {
      changed = onChanged;
      missed = onMissed;
      return () => {};
    },
    read: async (ids) => view().filter((row) => ids.includes(row.id)),
    idOf: (row) => row.id,
    scan: async (after) => {
      const page = view()
        .filter((row) => row.id > after)
        .slice(0, 3);
      return { rows: page, next: page.length < 3 ? undefined : page[2]?.id };
    },
  };
  return {
    source,
    change,
    missed: () => missed(),
    set(id: number, value: string) {
      rows.set(id, value);
      change(id);
    },
    show(id: number) {
      invisible.delete(id);
      change(id);
    },
    hide(id: number) {
      invisible.add(id);
      change(id);
    },
    quietly(work: () => void) {
      announce = false;
      work();
      announce = true;
    },
  };
}

/** What the stream sends up to and with the marker row. */
async function untilMarker(stream: ChangeStream<Row>): Promise<Row[]> {
  const got: Row[] = [];
  for (;;) {
    const { value } = await stream.next();
    if (!value) return got;
    got.push(value);
    if (value.id === MARKER) return got;
  }
}
