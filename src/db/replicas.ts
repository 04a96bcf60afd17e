import { channels } from "./channels.ts";
import type { Database, Executor, Statement } from "./database.ts";
import { isConnectionFailure } from "./failures.ts";
import { ReplicaFreshness, walPosition } from "./replica-freshness.ts";
import { type OpenReplica, type PrimarySample, Replica } from "./replica-health.ts";
import { currentUnit, holdsConnection, outsideUnitOfWork, type UnitOfWork } from "./unit-of-work.ts";

// Reads on PostgreSQL's own streaming replicas (DATABASE_REPLICA_URLS; README "Reads on
// replicas"). A statement goes to a replica only when it is a planner read (`Statement.readOnly`) of
// a read request's unit of work (`UnitOfWork.replicaReads`) outside a transaction, and a usable
// replica has replayed what ./replica-freshness.ts says its reader must see: their own last write,
// and every change of rights. Everything else (writes, transactions, credentials, LISTEN, the job
// queue, Prisma) is the primary's, and so is any read no replica may answer now: never an error.
// Every `checkEveryMs` a round samples the primary's WAL position and each replica's replayed one.

export interface ReplicaOptions {
  /** A replica further behind the primary than this is left out until it catches up. */
  readonly maxLagMs: number;
  /** How often positions are sampled and replicas checked; default a quarter of `maxLagMs`, 50 ms to 1 s. */
  readonly checkEveryMs?: number;
}

/** The primary with its replicas, as one Database whose planner reads of read requests go to a replica. */
export function withReplicas(
  primary: Database,
  replicas: readonly OpenReplica[],
  options: ReplicaOptions,
): Database {
  const router = new ReplicaRouter(primary, replicas, options);
  return Object.create(primary, {
    query: { value: <Row>(statement: Statement) => router.query<Row>(statement) },
    script: { value: (sql: string) => router.onPrimary(currentUnit(), () => primary.script(sql)) },
    transaction: { value: <T>(work: (tx: Executor) => Promise<T>) => router.transaction(work) },
    rightsChanged: { value: () => router.freshness.rightsChanged() },
    statementsByTarget: { value: () => router.statements() },
    close: { value: () => router.close() },
  }) as Database;
}

// SQLSTATE 40001 on a standby: the statement was cancelled because replay had to remove rows it read.
const RECOVERY_CONFLICT = "40001";

class ReplicaRouter {
  readonly freshness = new ReplicaFreshness();
  private readonly replicas: Replica[];
  private readonly history: PrimarySample[] = [];
  private readonly everyMs: number;
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly unlisten: Promise<(() => Promise<void>) | undefined>;

  constructor(
    private readonly primary: Database,
    replicas: readonly OpenReplica[],
    private readonly options: ReplicaOptions,
  ) {
    this.replicas = replicas.map((open) => new Replica(open, options.maxLagMs));
    this.everyMs = options.checkEveryMs ?? Math.min(1_000, Math.max(50, options.maxLagMs / 4));
    this.unlisten = outsideUnitOfWork(() => this.listenForRights());
    outsideUnitOfWork(() => void this.loop());
  }

  query<Row>(statement: Statement): Promise<Row[]> {
    const unit = currentUnit();
    if (!statement.readOnly || !unit?.replicaReads || holdsConnection(unit))
      return statement.readOnly
        ? this.primary.query<Row>(statement)
        : this.onPrimary(unit, () => this.primary.query<Row>(statement));
    const replica = this.pick(unit.actor);
    return replica ? this.onReplica<Row>(replica, statement) : this.primary.query<Row>(statement);
  }

  /** What may have written: once it ends, its writer's reads wait for it. */
  async onPrimary<T>(unit: UnitOfWork | undefined, work: () => Promise<T>): Promise<T> {
    if (unit?.actor === undefined) return work();
    try {
      return await work();
    } finally {
      this.freshness.wrote(unit.actor);
    }
  }

  transaction<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    const unit = currentUnit();
    // A write's unit of work reads on the primary from its first transaction on.
    if (unit) unit.replicaReads = false;
    return this.onPrimary(unit, () => this.primary.transaction(work));
  }

  statements(): { primary: number; replica: number } {
    let replica = 0;
    for (const { db } of this.replicas) replica += db.statementsByTarget?.().primary ?? 0;
    return { primary: this.primary.statementsByTarget?.().primary ?? 0, replica };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await (await this.unlisten)?.().catch(() => {});
    await Promise.all(this.replicas.map(({ db }) => db.close()));
    await this.primary.close();
  }

  /** A usable replica that has replayed what `reader` must see, in turn; undefined: the primary. */
  private pick(reader: number | undefined): Replica | undefined {
    const required = this.freshness.required(reader);
    if (required === undefined) return undefined;
    for (let tried = 0; tried < this.replicas.length; tried++) {
      const index = (this.next + tried) % this.replicas.length;
      const replica = this.replicas[index] as Replica;
      if (replica.usable && replica.replayed !== undefined && replica.replayed >= required) {
        this.next = (index + 1) % this.replicas.length;
        return replica;
      }
    }
    return undefined;
  }

  /** A replica that fails to answer (gone, or replay took the rows away) leaves the read to the primary. */
  private async onReplica<Row>(replica: Replica, statement: Statement): Promise<Row[]> {
    try {
      return await replica.db.query<Row>(statement);
    } catch (error) {
      const lost = isConnectionFailure(error);
      if (!lost && (error as { code?: unknown }).code !== RECOVERY_CONFLICT) throw error;
      if (lost) replica.failed();
      return this.primary.query<Row>(statement);
    }
  }

  /**
   * Changes of rights are announced on `channels.credential` (triggers, migrations 20261201000300
   * and 20261202045000). Until the LISTEN is in place, and whenever its connection is lost, they
   * may go unheard: reads stay on the primary, and what was committed meanwhile counts as changed.
   */
  private async listenForRights(): Promise<(() => Promise<void>) | undefined> {
    const { freshness } = this;
    let listening: boolean | undefined;
    const heard = () => {
      listening = true;
      freshness.rightsChanged();
      freshness.listening(true);
    };
    const stop = await this.primary
      .listen?.(
        channels.credential,
        () => freshness.rightsChanged(),
        heard,
        () => {
          listening = false;
          freshness.listening(false);
        },
      )
      .catch(() => undefined);
    if (stop && listening === undefined) heard();
    return stop;
  }

  private async loop(): Promise<void> {
    await this.round();
    if (!this.closed) this.timer = setTimeout(() => void this.loop(), this.everyMs).unref();
  }

  /** Samples the primary's WAL position (after every write that ended before), then each replica. */
  private async round(): Promise<void> {
    this.freshness.startRound();
    const at = Date.now();
    const position = await this.primary
      .query<{ position: string }>({ text: "SELECT pg_current_wal_lsn()::text AS position", values: [] })
      .then(([row]) => (row ? walPosition(row.position) : undefined))
      .catch(() => undefined);
    this.freshness.endRound(position);
    if (position !== undefined) this.remember({ at, position });
    await Promise.all(this.replicas.map((replica) => replica.check(this.history)));
    // What every replica has replayed is needed by none of them: forgotten (only while all answer).
    let replayed: bigint | undefined;
    for (const replica of this.replicas) {
      if (!replica.usable || replica.replayed === undefined) return;
      if (replayed === undefined || replica.replayed < replayed) replayed = replica.replayed;
    }
    if (replayed !== undefined) this.freshness.forgetReplayed(replayed);
  }

  /** Samples as old as the lag allowed and a little more: a replica behind all of them lags too much. */
  private remember(sample: PrimarySample): void {
    this.history.push(sample);
    const oldest = sample.at - this.options.maxLagMs - 2 * this.everyMs;
    while (this.history.length > 1 && (this.history[0] as PrimarySample).at < oldest) this.history.shift();
  }
}
