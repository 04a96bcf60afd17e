// A lane's pace is known once it has called devices for this long.
const PACE_MS = 100;
// Devices a lane holds claimed ahead of its free slots at most.
const MAX_AHEAD = 1_000;

/**
 * How many devices a lane claims ahead of its free slots, so that a claim's round trips overlap the
 * calls: as many as the lane calls in two claims' time at its pace (a claim and its check take
 * 10-50 ms; at thousands of answers a second a fixed width ran dry between claims), at least half
 * its width. A lane of one claims its next device once the previous one answered: nothing ahead.
 */
export class Pace {
  private called = 0;
  private since = 0;
  private claimMs = 0;

  constructor(private readonly width: number) {}

  ahead(): number {
    if (this.width === 1) return 0;
    const elapsed = Date.now() - this.since;
    if (this.since === 0 || elapsed < PACE_MS) return this.width;
    const twoClaims = Math.ceil((2 * this.called * this.claimMs) / elapsed);
    return Math.min(MAX_AHEAD, Math.max(Math.ceil(this.width / 2), twoClaims));
  }

  /** A claim (and its check) took `ms`. */
  claimed(ms: number): void {
    this.claimMs = this.claimMs === 0 ? ms : 0.7 * this.claimMs + 0.3 * ms;
  }

  /** `count` devices are called now. */
  calling(count: number): void {
    if (this.since === 0) this.since = Date.now();
    this.called += count;
  }
}
