import type { Database } from "./database.ts";
import { walPosition } from "./replica-freshness.ts";

/** The primary's WAL position as a round sampled it, and when the sample was sent. */
export interface PrimarySample {
  readonly at: number;
  readonly position: bigint;
}

/**
 * How far behind the primary a replica that replayed up to `replayed` is, at `now`: it holds
 * everything the primary had written at the newest sample it has replayed past, and may lack what
 * came after. A primary with nothing to write leaves its replicas no lag. Infinity: older than
 * every sample kept.
 */
export function lagMs(history: readonly PrimarySample[], replayed: bigint, now: number): number {
  for (let index = history.length - 1; index >= 0; index--) {
    const sample = history[index] as PrimarySample;
    if (sample.position <= replayed) return now - sample.at;
  }
  return Number.POSITIVE_INFINITY;
}

/**
 * Opens a replica's connections; `lost` is to be called when one of its idle connections is lost (a
 * stop or a restart): the replica is then left out until a check answers, so one that restarted is
 * not trusted with the position it had replayed before.
 */
export type OpenReplica = (lost: () => void) => Database;

/**
 * One streaming replica as reads see it: usable while its last check answered and it was within
 * the lag allowed; a check that has not answered by the next one, or a read that could not reach
 * it, leaves it out until a check answers again.
 */
export class Replica {
  /** The WAL position it had replayed at its last check; undefined when that check failed. */
  replayed: bigint | undefined;
  usable = false;
  private checking = false;
  readonly db: Database;

  constructor(
    open: OpenReplica,
    private readonly maxLagMs: number,
  ) {
    this.db = open(() => this.failed());
  }

  async check(history: readonly PrimarySample[]): Promise<void> {
    // The previous check is still waiting: the replica does not answer.
    if (this.checking) {
      this.usable = false;
      return;
    }
    this.checking = true;
    try {
      const [row] = await this.db.query<{ position: string | null }>({
        text: "SELECT pg_last_wal_replay_lsn()::text AS position",
        values: [],
      });
      // NULL: not a standby (a primary, or one promoted since): it follows no primary of ours.
      this.replayed = row?.position ? walPosition(row.position) : undefined;
      this.usable = this.replayed !== undefined && lagMs(history, this.replayed, Date.now()) <= this.maxLagMs;
    } catch {
      this.failed();
    } finally {
      this.checking = false;
    }
  }

  /** It could not be reached: left out until a check answers. */
  failed(): void {
    this.usable = false;
    this.replayed = undefined;
  }
}
