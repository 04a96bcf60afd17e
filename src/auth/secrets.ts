import { randomBytes } from "node:crypto";
import type { Executor } from "../db/database.ts";

/**
 * A server secret: the configured value when there is one, otherwise one generated on first start
 * and kept in the database, so it survives restarts and every process agrees on it.
 */
export async function storedSecret(
  db: Executor,
  name: string,
  configured: string | undefined,
): Promise<string> {
  if (configured) return configured;
  const select = { text: `SELECT "value" FROM "setting" WHERE "name" = $1::text`, values: [name] };
  // Every start after the first finds it: one statement.
  const [stored] = await db.query<{ value: string }>(select);
  if (stored) return stored.value;
  // System write: `setting` is not a resource; the secret is the server's own.
  await db.query({
    text: `INSERT INTO "setting" ("name", "value") VALUES ($1::text, $2::text) ON CONFLICT ("name") DO NOTHING`,
    values: [name, randomBytes(48).toString("base64url")],
  });
  // Another process may have stored one first: theirs wins, so every process agrees.
  const [row] = await db.query<{ value: string }>(select);
  if (!row) throw new Error(`no ${name}`);
  return row.value;
}

/** The key that signs session tokens (JWT_SECRET, or generated). */
export async function signingSecret(db: Executor, configured: string | undefined): Promise<Uint8Array> {
  return new TextEncoder().encode(await storedSecret(db, "jwt_secret", configured));
}
