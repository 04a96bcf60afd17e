import { createHash, randomBytes } from "node:crypto";
import type { Executor } from "../db/database.ts";

/** Only this hash is stored: the key itself is shown once, when it is made. */
export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export interface NewApiKey {
  readonly actor: number;
  readonly name?: string | null;
  readonly description?: string | null;
  readonly expiryDate?: string | null;
}

/**
 * System write: the hash is a hidden column no caller writes, and the routes that call this have
 * already checked that the caller may make a key for `actor`.
 */
export async function createApiKey(db: Executor, key: NewApiKey): Promise<string> {
  // 32 characters, as balena's keys are (clients check the length), holding 128 random bits. Hex:
  // a key never starts with "-" (which a command line would read as a flag) and is a word token
  // wherever one is expected (a supervisor's --api-key, an Authorization header). Keys made before
  // (64 hex characters) keep working: a key is looked up by its hash, whatever its length.
  const secret = randomBytes(16).toString("hex");
  await db.query({
    text: `INSERT INTO "api_key" ("is_of__actor", "name", "description", "expiry_date", "key_hash")
           VALUES ($1::int4, $2::text, $3::text, $4::timestamptz, $5::text)`,
    values: [key.actor, key.name ?? null, key.description ?? null, key.expiryDate ?? null, hashKey(secret)],
  });
  return secret;
}
