import "./pg-navigator.ts";
import pg from "pg";
import "./pg-navigator-end.ts";
import { createHash } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client.ts";
import type { Database, Executor, Statement } from "./database.ts";
import { countStatement } from "./statement-count.ts";

// Named prepared statements: PostgreSQL plans each distinct text once per connection.
// The name is derived from the text, so the same text always reuses its plan.
// The names of the texts seen lately, so a busy text is not hashed on every request.
const names = new Map<string, string>();
const remembered = 1_000;

function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `fg_${createHash("sha1").update(text).digest("base64url")}`;
    if (names.size >= remembered) names.clear();
    names.set(text, name);
  }
  return name;
}

function executorOn(client: pg.Pool | pg.PoolClient): Executor {
  return {
    async query<Row>(statement: Statement): Promise<Row[]> {
      countStatement();
      const result = await client.query({
        name: statementName(statement.text),
        text: statement.text,
        values: statement.values as unknown[],
      });
      return result.rows as Row[];
    },
    async script(sql: string): Promise<void> {
      countStatement();
      await client.query(sql);
    },
  };
}

export interface PostgresOptions {
  readonly url: string;
  readonly poolSize: number;
}

export function openPostgres({ url, poolSize }: PostgresOptions): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // Each connection keeps every statement it prepared; recycling bounds that memory
    // when clients send many distinct query shapes.
    maxUses: 20_000,
    // Timestamps leave the database in UTC whatever the server's zone.
    options: "-c TimeZone=UTC",
  });
  // An idle connection that dies (server restart) must not crash the process.
  pool.on("error", () => {});
  // Made on first use: only the commands that write through Prisma (seed, catalogue import) pay for it.
  let prisma: PrismaClient | undefined;
  return {
    kind: "postgres",
    get prisma() {
      prisma ??= new PrismaClient({ adapter: new PrismaPg(pool) });
      return prisma;
    },
    ...executorOn(pool),
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await work(executorOn(client));
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    async close() {
      await prisma?.$disconnect();
      await pool.end();
    },
  };
}
