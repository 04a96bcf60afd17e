import { randomBytes } from "node:crypto";
import type { Executor } from "../db/database.ts";

/**
 * The key that signs session tokens: JWT_SECRET when configured, otherwise one generated on first
 * start and kept in the database, so sessions survive restarts and every process agrees.
 */
export async function signingSecret(db: Executor, configured: string | undefined): Promise<Uint8Array> {
  if (configured) return new TextEncoder().encode(configured);
  await db.query({
    text: `INSERT INTO "setting" ("name", "value") VALUES ('jwt_secret', $1::text) ON CONFLICT ("name") DO NOTHING`,
    values: [randomBytes(48).toString("base64url")],
  });
  const [row] = await db.query<{ value: string }>({
    text: `SELECT "value" FROM "setting" WHERE "name" = 'jwt_secret'`,
    values: [],
  });
  if (!row) throw new Error("no JWT signing secret");
  return new TextEncoder().encode(row.value);
}
