import { hash } from "node:crypto";
import { BadRequest } from "../errors.ts";

/** A row's content as a 48-bit number: equal rows have equal fingerprints, different rows almost never. */
export function fingerprint(row: unknown): number {
  return hash("sha1", JSON.stringify(row), "buffer").readUIntBE(0, 6);
}

/** The stream ends this way when the rows it must remember outgrow its memory. */
const tooMany = (maxRows: number) =>
  new BadRequest(`This subscription follows more than ${maxRows} rows; subscribe with a narrower where`);

/**
 * What one subscriber could read of each row when it last read it, as a fingerprint per id
 * (issue 27: "no event from hidden changes"). A notification only names a row; it may come from a
 * change the subscriber cannot see (a hidden device of a public fleet) or did not select, so a row
 * read again is sent only if it differs from this memory. Then whether and when an event comes
 * depends only on what the subscriber can read.
 *
 * The rules:
 * - The memory starts from a baseline, every row the subscriber may read when it subscribes, sent
 *   to no one. A row that is not remembered is one the subscriber could not read at its last read:
 *   its appearance is news to them and is sent. Without the baseline, the first read of a row
 *   after a hidden change would be sent, and its timing would tell of the hidden change.
 * - A row read again and found gone (it left the subscriber's filter or rights) is forgotten, so
 *   its return is sent, like any other appearance; its leaving is not (nothing to send it as).
 * - The memory is never dropped to save space: beyond `maxRows` rows the stream ends with an
 *   error, since a forgotten row would be sent on its next hidden change.
 * - A rescan reads every row again, page by page in id order; it cannot see which remembered rows
 *   are gone, so it builds the memory anew from its pages (and the reads by id of rows it has
 *   already passed) and the new memory replaces the old when it is complete.
 * - What the bus does not announce (a change of the subscriber's rights; of a row its selection or
 *   filter reaches through a relation) shows at the row's next read, whatever change prompted it.
 */
export class VisibleRows {
  private last = new Map<number, number>();
  private rescan: { readonly rows: Map<number, number>; through: number } | undefined;

  constructor(private readonly maxRows: number) {}

  /** `row` was read by its id (undefined: the subscriber may not read it now); whether to send it. */
  byId(id: number, row: unknown): boolean {
    if (row === undefined) {
      this.last.delete(id);
      this.rescan?.rows.delete(id);
      return false;
    }
    // A row the rescan has passed is as the rescan found it: absent from its page means gone.
    if (this.rescan && id <= this.rescan.through)
      return this.remember(id, row, this.rescan.rows.get(id), this.rescan.rows);
    return this.remember(id, row, this.last.get(id));
  }

  /** `row` came on a page of the rescan; whether to send it. */
  onPage(id: number, row: unknown): boolean {
    return this.remember(id, row, this.last.get(id), this.rescan?.rows);
  }

  /** A rescan begins (again): every row the subscriber may read will come on its pages. */
  beginRescan(): void {
    this.rescan = { rows: new Map(), through: 0 };
  }

  /** The rescan has read every id up to `through`; undefined: it is complete. */
  rescanned(through: number | undefined): void {
    if (!this.rescan) return;
    if (through !== undefined) {
      this.rescan.through = through;
      return;
    }
    this.last = this.rescan.rows;
    this.rescan = undefined;
  }

  private remember(
    id: number,
    row: unknown,
    before: number | undefined,
    rescanned?: Map<number, number>,
  ): boolean {
    const now = fingerprint(row);
    this.last.set(id, now);
    rescanned?.set(id, now);
    if (this.last.size > this.maxRows) throw tooMany(this.maxRows);
    return now !== before;
  }
}
