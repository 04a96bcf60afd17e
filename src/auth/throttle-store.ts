import { createHmac } from "node:crypto";
import type { Executor } from "../db/database.ts";
import {
  type AttemptStates,
  afterFailure,
  freshState,
  type KeyState,
  type ThrottleKeys,
  type ThrottleKind,
  type ThrottleOptions,
} from "./throttle.ts";

// The login throttle's counts in the `login_throttle` table, which every instance shares: the
// leaky buckets of throttle.ts, each change one statement that reads and writes the rows under
// their locks, so instances never lose each other's counts.
//
// Every statement touches an attempt's three rows in one order (the primary key's: address, pair,
// username), so two of them wait for each other at most, never in a cycle; the sweep skips rows
// others hold.

/** How long an attempt counts as in flight at most: an instance may stop before it ends it. */
export const PENDING_LEASE_MS = 60_000;
/** Idle rows unused for this long are forgotten even below LOGIN_THROTTLE_MAX_KEYS. */
export const IDLE_RETENTION_MS = 24 * 60 * 60_000;

/** The kinds in the order every statement touches their rows (the primary key's). */
export const ThrottleKinds: readonly ThrottleKind[] = ["address", "pair", "username"];
const kinds = ThrottleKinds;
const COLUMNS = `"kind", "key", "level", "at", "failed_at", "over_since", "blocked_until", "pending", "pending_until", "used_at"`;
// Keys are $1–$3 and the time $4 in every statement of an attempt.
const NOW = "$4::float8";
/** In flight now: the lease of an instance that stopped mid-attempt has ended. */
const LIVE_PENDING = `CASE WHEN t."pending_until" <= ${NOW} THEN 0 ELSE t."pending" END`;

/** The `VALUES` of an attempt's three rows, in the key's order; `row` writes one, its key is `key`. */
function threeRows(row: (kind: ThrottleKind, key: string, index: number) => string): string {
  return kinds.map((kind, index) => `(${row(kind, `$${index + 1}::text`, index)})`).join(", ");
}

/** One value per kind of row `t`: `CASE t.kind …` over parameters `$first`, `$first+1`, `$first+2`. */
function perKind(first: number): string {
  const [address, pair] = kinds;
  return `(CASE t."kind" WHEN '${address}' THEN $${first}::float8 WHEN '${pair}' THEN $${first + 1}::float8 ELSE $${first + 2}::float8 END)`;
}

interface Row {
  readonly kind: ThrottleKind;
  readonly level: number;
  readonly at: number;
  readonly failed_at: number | null;
  readonly over_since: number;
  readonly blocked_until: number;
  readonly pending: number;
}

export class ThrottleStore {
  constructor(
    private readonly db: Executor,
    /** Keys are stored as HMACs under this secret: the table holds no username and no address. */
    private readonly secret: string,
    private readonly options: ThrottleOptions,
  ) {}

  /**
   * System write: begins an attempt on its three keys (one more in flight, the row made if new)
   * and answers what each had on record before it. The caller decides from that and `release`s it
   * if it must wait. Two attempts at once each see the other in flight, so at most as many go
   * ahead as would one after the other, whichever instances they reach.
   */
  async reserve(keys: ThrottleKeys, now: number): Promise<AttemptStates> {
    const rows = await this.db.query<Row>({
      text: `INSERT INTO "login_throttle" AS t (${COLUMNS})
             VALUES ${threeRows((kind, key) => `'${kind}', ${key}, 0, ${NOW}, NULL, ${NOW}, 0, 1, $5::float8, ${NOW}`)}
             ON CONFLICT ("kind", "key") DO UPDATE SET "pending" = ${LIVE_PENDING} + 1,
               "pending_until" = EXCLUDED."pending_until", "used_at" = EXCLUDED."used_at"
             RETURNING "kind", "level", "at", "failed_at", "over_since", "blocked_until", "pending" - 1 AS "pending"`,
      values: [...this.hashed(keys), now, now + PENDING_LEASE_MS],
    });
    const states: Partial<Record<ThrottleKind, KeyState>> = {};
    for (const row of rows) states[row.kind] = stateOf(row);
    return { pair: states.pair, address: states.address, username: states.username };
  }

  /** System write: a reserved attempt that must wait ends without counting. */
  async release(keys: ThrottleKeys, now: number): Promise<void> {
    await this.end(keys, now, false);
  }

  /** System write: the attempt ended well; the pair's own failures are forgiven (throttle.ts). */
  async succeed(keys: ThrottleKeys, now: number): Promise<void> {
    await this.end(keys, now, true);
  }

  /**
   * System write: the attempt failed. Each row drains, takes one more failure, and waits once it
   * is over its allowance: `afterFailure` of throttle.ts in SQL (a row swept meanwhile is made as
   * that function makes it from nothing).
   */
  async fail(keys: ThrottleKeys, now: number): Promise<void> {
    const { options } = this;
    const drained = `greatest(0, t."level" - (${NOW} - t."at") / ${perKind(8)})`;
    const over = `ceil(${drained} + 1 - ${perKind(5)})`;
    const fresh = kinds.map((kind) =>
      afterFailure({ ...freshState(now), pending: 1 }, options[kind], options, now),
    );
    await this.db.query({
      text: `INSERT INTO "login_throttle" AS t (${COLUMNS})
             VALUES ${threeRows((kind, key, index) => `'${kind}', ${key}, 1, ${NOW}, ${NOW}, ${NOW}, $${13 + index}::float8, 0, ${NOW}, ${NOW}`)}
             ON CONFLICT ("kind", "key") DO UPDATE SET
               "level" = ${drained} + 1, "at" = ${NOW}, "failed_at" = ${NOW},
               "over_since" = CASE WHEN ${drained} <= ${perKind(5)} THEN ${NOW} ELSE t."over_since" END,
               "blocked_until" = CASE WHEN ${over} > 0
                 THEN ${NOW} + least($12::float8, $11::float8 * power(2::float8, least(${over} - 1, 64)))
                 ELSE t."blocked_until" END,
               "pending" = greatest(0, ${LIVE_PENDING} - 1), "used_at" = ${NOW}`,
      values: [
        ...this.hashed(keys),
        now,
        ...kinds.map((kind) => options[kind].free),
        ...kinds.map((kind) => options[kind].drainMs),
        options.baseDelayMs,
        options.maxDelayMs,
        ...fresh.map((state) => state.blockedUntil),
      ],
    });
  }

  /**
   * One attempt less in flight; with `forgive`, the pair's level and wait go, and once nothing of
   * it is in flight its row is as good as none (its last failure forgotten too, as the in-memory
   * throttle drops the key).
   */
  private async end(keys: ThrottleKeys, now: number, forgive: boolean): Promise<void> {
    const pending = `greatest(0, ${LIVE_PENDING} - 1)`;
    const forgiven = `($5::boolean AND t."kind" = 'pair')`;
    await this.db.query({
      text: `INSERT INTO "login_throttle" AS t (${COLUMNS})
             VALUES ${threeRows((kind, key) => `'${kind}', ${key}, 0, ${NOW}, NULL, ${NOW}, 0, 0, ${NOW}, ${NOW}`)}
             ON CONFLICT ("kind", "key") DO UPDATE SET "pending" = ${pending}, "used_at" = ${NOW},
               "level" = CASE WHEN ${forgiven} THEN 0 ELSE t."level" END,
               "blocked_until" = CASE WHEN ${forgiven} THEN 0 ELSE t."blocked_until" END,
               "failed_at" = CASE WHEN ${forgiven} AND ${pending} = 0 THEN NULL ELSE t."failed_at" END`,
      values: [...this.hashed(keys), now, forgive],
    });
  }

  /** Rows of each kind now. */
  async rows(): Promise<Record<ThrottleKind, number>> {
    const counts = await this.db.query<{ kind: ThrottleKind; rows: number }>({
      text: `SELECT "kind", count(*)::int AS "rows" FROM "login_throttle" GROUP BY "kind"`,
      values: [],
    });
    const rows = { address: 0, pair: 0, username: 0 };
    for (const count of counts) rows[count.kind] = Number(count.rows);
    return rows;
  }

  /**
   * System write: forgets what no longer counts, as the in-memory throttle does when it is full,
   * and what has been idle for a day (IDLE_RETENTION_MS). A kind over LOGIN_THROTTLE_MAX_KEYS
   * loses its idle rows (drained, not waiting, nothing in flight: as good as none), then its
   * stalest down to 90%, so the next sweep is a tenth of the capacity away. Rows another statement
   * holds are skipped, never waited for. Answers the rows forgotten.
   */
  async sweep(now: number): Promise<number> {
    const { options } = this;
    const rows = await this.rows();
    const full = kinds.filter((kind) => rows[kind] > options.maxKeys);
    const idle = await this.db.query({
      text: `DELETE FROM "login_throttle" WHERE ("kind", "key") IN (
               SELECT "kind", "key" FROM "login_throttle" t
                WHERE t."level" <= ($1::float8 - t."at") / ${perKind(3)} AND t."blocked_until" <= $1::float8
                  AND (t."pending" = 0 OR t."pending_until" <= $1::float8)
                  AND (t."used_at" < $2::float8 OR t."kind" = ANY ($6::text[]))
                FOR UPDATE SKIP LOCKED)
             RETURNING "kind"`,
      values: [now, now - IDLE_RETENTION_MS, ...kinds.map((kind) => options[kind].drainMs), full],
    });
    let forgotten = idle.length;
    for (const kind of full) {
      const excess =
        rows[kind] - idle.filter((row) => row.kind === kind).length - Math.floor(options.maxKeys * 0.9);
      if (excess <= 0) continue;
      const stalest = await this.db.query({
        text: `DELETE FROM "login_throttle" WHERE ("kind", "key") IN (
                 SELECT "kind", "key" FROM "login_throttle" WHERE "kind" = $1::text
                  ORDER BY "used_at" LIMIT $2::int FOR UPDATE SKIP LOCKED)
               RETURNING "kind"`,
        values: [kind, excess],
      });
      forgotten += stalest.length;
    }
    return forgotten;
  }

  /** The stored keys, in the statements' order. */
  private hashed(keys: ThrottleKeys): string[] {
    return kinds.map((kind) =>
      createHmac("sha256", this.secret).update(`${kind}\n${keys[kind]}`).digest("base64url"),
    );
  }
}

function stateOf(row: Row): KeyState {
  return {
    level: Number(row.level),
    at: Number(row.at),
    failedAt: row.failed_at === null ? Number.NEGATIVE_INFINITY : Number(row.failed_at),
    overSince: Number(row.over_since),
    blockedUntil: Number(row.blocked_until),
    pending: Number(row.pending),
  };
}
