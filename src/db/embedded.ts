import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "../generated/prisma/client.ts";
import { ConnectionBudget } from "./connection-budget.ts";
import type { Database, Executor, Statement } from "./database.ts";
import { lockDirectory } from "./directory-lock.ts";
import { createDataDir, isNewDataDir } from "./embedded-first-start.ts";
import { type EmbeddedQueries, startEmbeddedThread } from "./embedded-thread.ts";
import { QueryCancelled } from "./failures.ts";
import { countStatement, currentUnit } from "./unit-of-work.ts";

// PGlite runs each statement to its end, on a thread of its own (./embedded-thread.ts): nothing can
// interrupt one that has started (no statement_timeout, no cancel), and the statements after it
// wait. What it can do is not start the statements of a request whose client has already gone away.
function notAbandoned(): void {
  if (currentUnit()?.abandoned) throw new QueryCancelled();
}

/** Statements sent on the database, for /metrics (the embedded database is always the primary). */
interface Sent {
  statements: number;
}

function executorOn(client: EmbeddedQueries, sent: Sent): Executor {
  return {
    async query<Row>(statement: Statement): Promise<Row[]> {
      countStatement();
      sent.statements++;
      notAbandoned();
      const result = await client.query<Row>(statement.text, statement.values as unknown[]);
      return result.rows;
    },
    async script(sql: string): Promise<void> {
      countStatement();
      sent.statements++;
      await client.exec(sql);
    },
  };
}

// PostgreSQL's memory settings, set for one process serving one fleetgate (measured on 2026-11-26,
// README "The embedded database's memory"): PostgreSQL's defaults are for a server of its own. A
// WebAssembly memory grows to the most it ever held and never gives it back, so every buffer here is
// paid for the process's whole life. 16 MB of shared buffers hold the demo data and a fleet's hot
// rows many times over (the files themselves stay in the system's page cache); an index built by a
// migration sorts in 16 MB; single-user mode has one connection.
const startParams = [
  ...PGlite.defaultStartParams,
  ...["-c", "shared_buffers=16MB"],
  ...["-c", "maintenance_work_mem=16MB"],
  ...["-c", "max_connections=10"],
];

export interface EmbeddedOptions {
  /** Told what takes long before it starts (a new data directory), for the log. */
  readonly progress?: (message: string) => void;
}

/** PGlite: PostgreSQL compiled to WebAssembly, in this process, stored in `dataDir` (or memory). */
export async function openEmbedded(
  dataDir: string | undefined,
  options: EmbeddedOptions = {},
): Promise<Database> {
  let unlock = () => {};
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    unlock = lockDirectory(dataDir);
    if (isNewDataDir(dataDir)) {
      options.progress?.(`creating the embedded database in ${dataDir} (first start only)`);
      await createDataDir(dataDir).catch((error: unknown) => {
        unlock();
        throw error;
      });
    }
  }
  const pglite = await startEmbeddedThread({ dataDir, startParams }).catch((error: unknown) => {
    unlock();
    throw error;
  });
  // Made on first use: only the commands that write through Prisma (seed, catalogue import) pay for it.
  let prisma: PrismaClient | undefined;
  const sent: Sent = { statements: 0 };
  return {
    kind: "embedded",
    embedded: pglite,
    get prisma() {
      // The adapter calls query (with its own parsers), exec and transaction, which the thread serves
      // as PGlite does (pglite-prisma-adapter 0.7; test/db/embedded-thread.test.ts).
      prisma ??= new PrismaClient({ adapter: new PrismaPGlite(pglite as unknown as PGlite) });
      return prisma;
    },
    async releasePrisma() {
      const released = prisma;
      prisma = undefined;
      await released?.$disconnect();
    },
    ...executorOn(pglite, sent),
    transaction: (work) => pglite.transaction((tx) => work(executorOn(tx, sent))),
    statementsByTarget: () => ({ primary: sent.statements, replica: 0 }),
    // One connection, which PGlite gives each statement in turn: streams take theirs one at a time.
    streams: new ConnectionBudget(1),
    // PGlite's own LISTEN: a NOTIFY of this instance is delivered when its transaction commits.
    // In the process, with no connection to lose, so nothing is ever missed.
    listen: async (channel, onPayload) => {
      const stop = await pglite.listen(channel, onPayload);
      return () => stop();
    },
    async close() {
      await prisma?.$disconnect();
      await pglite.close();
      unlock();
    },
  };
}
