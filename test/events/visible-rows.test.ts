import { describe, expect, it } from "vitest";
import { BadRequest } from "../../src/errors.ts";
import { VisibleRows } from "../../src/events/visible-rows.ts";

// What a subscriber last read of each row: a row is sent when it is new to them or differs, a gone
// row is forgotten, and a rescan finds the rows that went without a word.

describe("VisibleRows", () => {
  it("says a row is to be sent when it is new or differs, not when it reads the same", () => {
    const rows = new VisibleRows(10);
    expect(rows.byId(1, { name: "a" })).toBe(true);
    expect(rows.byId(1, { name: "a" })).toBe(false);
    expect(rows.byId(1, { name: "b" })).toBe(true);
    rows.byId(1, undefined);
    expect(rows.byId(1, { name: "b" })).toBe(true);
  });

  it("forgets, after a rescan, the rows that no page returned", () => {
    const rows = new VisibleRows(10);
    rows.beginRescan();
    for (const id of [1, 2, 3]) rows.onPage(id, { id });
    rows.rescanned(undefined);

    rows.beginRescan();
    // The first page covers ids up to 2 and finds 2 gone.
    expect(rows.onPage(1, { id: 1 })).toBe(false);
    rows.rescanned(2);
    // Read by id while the rescan runs: 2 came back (news), 3 is not passed yet (as it was).
    expect(rows.byId(2, { id: 2 })).toBe(true);
    expect(rows.byId(3, { id: 3 })).toBe(false);
    // The last page finds 3 gone.
    rows.rescanned(undefined);
    expect(rows.byId(2, { id: 2 })).toBe(false);
    expect(rows.byId(3, { id: 3 })).toBe(true);
  });

  it("refuses to remember more rows than its bound", () => {
    const rows = new VisibleRows(2);
    rows.byId(1, {});
    rows.byId(2, {});
    expect(() => rows.byId(3, {})).toThrow(BadRequest);
  });
});
