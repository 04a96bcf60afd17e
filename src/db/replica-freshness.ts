/**
 * How far a replica must have replayed the primary's WAL before it may answer a read (./replicas.ts).
 * The rules, in order:
 * 1. While changes of rights may go unheard (the announcement connection does not listen), every
 *    read goes to the primary.
 * 2. A writer reads their own writes: from when their statement or transaction ends until a WAL
 *    position sampled on the primary after that is known, their reads go to the primary; then to
 *    a replica only once it has replayed that far.
 * 3. A change that may narrow what someone may read (a key, a session, a membership, an admin
 *    flag) is everyone's write: every read waits for it as in 2.
 * 4. Bounded: a position every replica in use has replayed is forgotten, and so is the oldest
 *    beyond `maxWriters`; what is forgotten raises a floor every replica must have passed (one that
 *    comes back from an outage or a lag must first catch up).
 * Positions are sampled in rounds, one at a time: a round that starts after a write ended reads a
 * position at or past the write's commit, since the commit came first.
 */
export class ReplicaFreshness {
  /** Writers (actors, or EVERYONE) who wrote since the round under way started. */
  private waiting = new Set<number>();
  /** The writers of the round under way, whose position it is sampling. */
  private sampling = new Set<number>();
  /** The position each writer's reads need, in the order they were learnt (so oldest first). */
  private readonly positions = new Map<number, bigint>();
  private floor = 0n;
  private heard = false;

  constructor(private readonly maxWriters = 100_000) {}

  /** `writer` (an actor) finished a statement or transaction on the primary. */
  wrote(writer: number): void {
    this.waiting.add(writer);
    // More writers in one round than are kept: everyone waits for the next position instead.
    if (this.waiting.size > this.maxWriters) this.waiting = new Set([EVERYONE]);
  }

  /** A change of someone's rights committed, or may have been missed. */
  rightsChanged(): void {
    this.waiting.add(EVERYONE);
  }

  /** Whether changes of rights are heard now (rule 1). */
  listening(heard: boolean): void {
    this.heard = heard;
  }

  /** A round starts: the writers so far wait for the position it samples. */
  startRound(): void {
    this.sampling = this.waiting;
    this.waiting = new Set();
  }

  /** The round's position on the primary, or undefined when it could not be read (they wait on). */
  endRound(position: bigint | undefined): void {
    const writers = this.sampling;
    this.sampling = new Set();
    if (position === undefined) {
      for (const writer of writers) this.waiting.add(writer);
      return;
    }
    for (const writer of writers) {
      this.positions.delete(writer);
      this.positions.set(writer, position);
    }
    while (this.positions.size > this.maxWriters) this.forgetOldest();
  }

  /**
   * The position a replica must have replayed to answer `reader` (an actor, or undefined for a
   * caller who never writes), or undefined when only the primary may.
   */
  required(reader: number | undefined): bigint | undefined {
    if (!this.heard || this.pending(EVERYONE) || (reader !== undefined && this.pending(reader)))
      return undefined;
    let position = this.floor;
    const everyone = this.positions.get(EVERYONE);
    if (everyone !== undefined && everyone > position) position = everyone;
    const own = reader === undefined ? undefined : this.positions.get(reader);
    return own !== undefined && own > position ? own : position;
  }

  /** Every replica in use has replayed `replayed`: the positions up to it are no longer needed. */
  forgetReplayed(replayed: bigint): void {
    for (const [, position] of this.positions) {
      if (position > replayed) return;
      this.forgetOldest();
    }
  }

  private pending(writer: number): boolean {
    return this.waiting.has(writer) || this.sampling.has(writer);
  }

  private forgetOldest(): void {
    const oldest = this.positions.entries().next().value;
    if (!oldest) return;
    this.positions.delete(oldest[0]);
    if (oldest[1] > this.floor) this.floor = oldest[1];
  }
}

/** The writer of a change of rights: every reader's reads wait for it. Actors are positive. */
const EVERYONE = -1;

/** A WAL position as PostgreSQL writes it (`16/B374D848`), as a number that compares. */
export function walPosition(text: string): bigint {
  const [high, low] = text.split("/");
  if (high === undefined || low === undefined || !/^[0-9A-F]+$/i.test(high + low))
    throw new Error(`not a WAL position: ${text}`);
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}
