import type { Executor } from "../../../src/db/database.ts";
import type { ExpectedSchema } from "./prisma-model.ts";

// Reads the same facts as ExpectedSchema back from a live database's catalog.
export async function actualSchema(db: Executor): Promise<ExpectedSchema> {
  const columns = await db.query<{ line: string }>({
    text: `SELECT c.table_name || '.' || c.column_name || ' ' || c.data_type
                  || CASE WHEN c.data_type LIKE 'timestamp%' THEN '(' || c.datetime_precision || ')' ELSE '' END
                  || CASE WHEN c.is_nullable = 'YES' THEN ' null' ELSE ' not null' END
                  || CASE WHEN c.column_default IS NULL THEN '' ELSE ' default' END AS line
             FROM information_schema.columns c
            WHERE c.table_schema = current_schema() AND c.table_name <> '_prisma_migrations'`,
    values: [],
  });
  const indexes = await db.query<{ line: string; is_unique: boolean }>({
    // A key column by its name; a key that is an expression (attnum 0) as PostgreSQL prints it.
    text: `SELECT t.relname || '(' || (
                    SELECT string_agg(coalesce(a.attname::text, pg_get_indexdef(i.indexrelid, k.ord::int, true)), ',' ORDER BY k.ord)
                      FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
                      LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum) || ')' AS line,
                  i.indisunique AS is_unique
             FROM pg_index i
             JOIN pg_class t ON t.oid = i.indrelid
             JOIN pg_namespace n ON n.oid = t.relnamespace
            WHERE n.nspname = current_schema() AND t.relname <> '_prisma_migrations'`,
    values: [],
  });
  const foreignKeys = await db.query<{ line: string }>({
    text: `SELECT t.relname || '(' || (
                    SELECT string_agg(a.attname, ',' ORDER BY k.ord)
                      FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
                      JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum)
                  || ') -> ' || r.relname || '(' || (
                    SELECT string_agg(a.attname, ',' ORDER BY k.ord)
                      FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
                      JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum)
                  || ') on delete ' || con.confdeltype::text AS line
             FROM pg_constraint con
             JOIN pg_class t ON t.oid = con.conrelid
             JOIN pg_class r ON r.oid = con.confrelid
             JOIN pg_namespace n ON n.oid = t.relnamespace
            WHERE con.contype = 'f' AND n.nspname = current_schema()`,
    values: [],
  });
  const lines = (rows: { line: string }[]) => rows.map((row) => row.line).sort();
  return {
    columns: lines(columns),
    uniques: lines(indexes.filter((index) => index.is_unique)),
    indexes: lines(indexes.filter((index) => !index.is_unique)),
    foreignKeys: lines(foreignKeys),
  };
}
