import type { Database } from "../../../src/db/database.ts";
import { directivesOf, graphqlRequest, parseGraphQLCase } from "./graphql-cases.ts";
import { type CaseRequest, parseHttp } from "./sql-cases.ts";

// The write cases (test/core/cases/README.md): a write's request (a .http with its body, or a
// .graphql mutation) with the read that shows the rows after it, and the fixture put back as it was
// after each case, so that every case starts from the same rows and ids whatever ran before it.

export interface WriteCase {
  readonly request: CaseRequest;
  /** The read, as the admin, that shows the rows after the write (`## after: GET <url>`). */
  readonly after: CaseRequest;
}

function afterRead(line: string | undefined, file: string): CaseRequest {
  const found = /^GET (\S.*)$/.exec(line ?? "");
  if (!found) throw new Error(`${file} needs '## after: GET <url>', the read that shows the rows after`);
  return { method: "GET", url: (found[1] as string).trim(), status: 200, headers: {} };
}

/**
 * A .http write case: as a read case's .http (cases/README.md), then a blank line and the body,
 * sent as written; `## after: GET <url>` anywhere.
 */
export function parseWriteHttp(text: string, file: string): WriteCase {
  const lines = text.split("\n");
  const requestLine = lines.findIndex((line) => line.trim() !== "" && !line.trim().startsWith("#"));
  const blank = lines.findIndex((line, i) => i > requestLine && line.trim() === "");
  const head = parseHttp(lines.slice(0, blank === -1 ? undefined : blank).join("\n"));
  const body =
    blank === -1
      ? ""
      : lines
          .slice(blank)
          .filter((line) => !line.trim().startsWith("#"))
          .join("\n")
          .trim();
  return {
    request: { ...head, ...(body ? { body } : {}) },
    after: afterRead(directivesOf(text).get("after"), file),
  };
}

/** A .graphql write case: a mutation as a GraphQL case (cases/README.md), with its `## after:` read. */
export function parseWriteGraphQL(text: string, file: string): WriteCase {
  const graphqlCase = parseGraphQLCase(text);
  return { request: graphqlRequest(graphqlCase), after: afterRead(graphqlCase.after, file) };
}

const SNAPSHOT = "case_snapshot";
const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Copies every table of the public schema (and where each sequence stands) into a schema of its own,
 * and answers the function that puts them back: one transaction that empties the tables and copies
 * the rows in again, triggers and foreign keys set aside meanwhile (session_replication_role), so
 * no NOTIFY of the change bus goes out and the order of the tables does not matter.
 */
export async function snapshotTables(db: Database): Promise<() => Promise<void>> {
  const tables = (
    await db.query<{ name: string }>({
      text: `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
      values: [],
    })
  ).map((row) => quoted(row.name));
  const sequences = await db.query<{ name: string; last: string | null }>({
    text: `SELECT sequencename AS name, last_value::text AS last FROM pg_sequences WHERE schemaname = 'public'`,
    values: [],
  });
  await db.script(
    [
      `DROP SCHEMA IF EXISTS ${SNAPSHOT} CASCADE`,
      `CREATE SCHEMA ${SNAPSHOT}`,
      ...tables.map((table) => `CREATE TABLE ${SNAPSHOT}.${table} AS TABLE public.${table}`),
    ].join(";\n"),
  );
  const restore = [
    "BEGIN",
    "SET LOCAL session_replication_role = replica",
    `TRUNCATE ${tables.map((table) => `public.${table}`).join(", ")}`,
    ...tables.map((table) => `INSERT INTO public.${table} TABLE ${SNAPSHOT}.${table}`),
    ...sequences.map(({ name, last }) =>
      last === null
        ? `SELECT setval('public.${quoted(name)}', 1, false)`
        : `SELECT setval('public.${quoted(name)}', ${Number(last)}, true)`,
    ),
    "COMMIT",
  ].join(";\n");
  return () => db.script(restore);
}

/** Every row of every table of the public schema, as one text per table: to show a restore is whole. */
export async function tableContents(db: Database): Promise<Record<string, string>> {
  const tables = await db.query<{ name: string }>({
    text: `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
    values: [],
  });
  const contents: Record<string, string> = {};
  for (const { name } of tables) {
    const [row] = await db.query<{ rows: string | null }>({
      text: `SELECT string_agg(t::text, E'\n' ORDER BY t::text) AS rows FROM public.${quoted(name)} t`,
      values: [],
    });
    contents[name] = row?.rows ?? "";
  }
  return contents;
}

const isoTime = /"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)"/g;

/**
 * An answer with each time at or after `since` (the fixture's build) as `"<run time>"`: a row's
 * `created_at` is the time it was written, new on every run; the fixed times of the demo seed are
 * older and stay as they are.
 */
export function maskRunTimes(text: string, since: Date): string {
  return text.replace(isoTime, (quoted, time: string) =>
    Date.parse(time) >= since.getTime() ? '"<run time>"' : quoted,
  );
}
