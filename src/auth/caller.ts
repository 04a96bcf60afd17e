import { decodeJwt } from "jose";
import type { Executor } from "../db/database.ts";
import { GroupedLookup } from "../db/grouped-lookup.ts";
import { hashKey } from "./api-keys.ts";
import { looksLikeJwt, type SessionClaims, verifyToken } from "./tokens.ts";

/** Who is calling, as resolved from their credential; `anonymous` when the request carries none. */
export type Caller =
  | {
      readonly kind: "user";
      readonly actor: number;
      readonly userId: number;
      readonly username: string;
      readonly email: string;
      readonly isAdmin: boolean;
      /** Set when the credential is a session token (not an API key). */
      readonly session: SessionClaims | undefined;
    }
  | {
      readonly kind: "device";
      readonly actor: number;
      readonly deviceId: number;
      readonly uuid: string;
      readonly applicationId: number;
    }
  | {
      readonly kind: "application";
      readonly actor: number;
      readonly applicationId: number;
      readonly slug: string;
    }
  // No credential at all (an invalid one is refused instead): reads what is public, writes nothing.
  | { readonly kind: "anonymous" };

/** A caller whose credential was checked: the only kind that may write or act on devices. */
export type Authenticated = Exclude<Caller, { kind: "anonymous" }>;

export const anonymous: Caller = { kind: "anonymous" };

/**
 * What a credential resolves to now: its caller and when it expires (ms since the epoch; undefined
 * for a key without an expiry date), or why it does not (a subscription it ends is told).
 */
export type Resolution = { readonly caller: Authenticated; readonly expiresAt: number | undefined } | Refusal;

/** Why a credential is refused, as its holder is told: "expired", "is unknown or was revoked", … */
export interface Refusal {
  readonly refused: string;
}

interface KeyRow {
  actor: number;
  user_id: number | null;
  username: string | null;
  email: string | null;
  is_admin: boolean | null;
  application_id: number | null;
  slug: string | null;
  device_id: number | null;
  uuid: string | null;
  device_application: number | null;
}

// A credential resolves to the same caller for a few seconds without asking the database again,
// so a read stays one statement. Writes to users and keys clear it (see `forget`).
const cacheDefaults = { ttlMs: 5_000, maxEntries: 10_000 };
// Credentials are looked up by their own text, not a hash of it: a hit costs a map lookup, not a
// SHA-256 on every request. None this server issues is longer than this (an API key has 32 or 64
// characters, a session token a few hundred); a longer one is not kept, so the keys stay small.
const maxCachedLength = 1_024;

interface Cached {
  readonly caller: Authenticated;
  /** ms since the epoch: the cache's time-out, or the credential's own expiry when that is sooner. */
  readonly expires: number;
}

/**
 * Tables whose writes may end a credential or change the caller it stands for or what it may read:
 * a key or a user changed or deleted, a device or fleet deleted (its keys then name no one), a
 * device moved to another fleet (its key's rights follow the fleet), a fleet moved or made private,
 * a membership or organization changed or deleted. The instance that writes forgets its cached
 * callers at once (and with replicas, reads wait for the change: db/replicas.ts); every instance
 * also hears the change on `channels.credential` (triggers).
 */
export const credentialTables: ReadonlySet<string> = new Set([
  "user",
  "api_key",
  "device",
  "application",
  "organization",
  "organization_membership",
]);

export class Authenticator {
  // Holds credentials in memory as the request did; it is never logged or serialized.
  private readonly cache = new Map<string, Cached>();
  /** The cached credentials of each actor, so one actor's change forgets only theirs. */
  private readonly byActor = new Map<number, Set<string>>();
  private generation = 0;

  private readonly limits: typeof cacheDefaults;
  // Not cached API keys looked up together: one statement for all that arrive in a turn.
  private readonly keys: GroupedLookup<ApiKeyRow>;

  constructor(
    private readonly db: Executor,
    private readonly secret: Uint8Array,
    /** How long a checked credential is kept, and how many are. */
    limits: Partial<typeof cacheDefaults> = {},
  ) {
    this.limits = { ...cacheDefaults, ...limits };
    this.keys = new GroupedLookup((hashes) => apiKeyRows(db, hashes));
  }

  get signingSecret(): Uint8Array {
    return this.secret;
  }

  /** Forgets every cached caller: a password, key or user changed, or changes may have gone unheard. */
  forget(): void {
    this.cache.clear();
    this.byActor.clear();
    this.generation++;
  }

  /** Forgets the cached callers of one actor, whose credentials or rights changed. */
  forgetActor(actor: number): void {
    for (const credential of this.byActor.get(actor) ?? []) this.cache.delete(credential);
    this.byActor.delete(actor);
    // A lookup under way may have read the actor before the change: it answers, but is not kept.
    this.generation++;
  }

  /** The caller of a credential checked a moment ago (`ttlMs`) and not forgotten since, if any. */
  private cached(credential: string): Authenticated | undefined {
    const entry = this.cache.get(credential);
    if (entry === undefined) return undefined;
    if (entry.expires > Date.now()) return entry.caller;
    this.drop(credential, entry);
    return undefined;
  }

  private keep(credential: string, entry: Cached): void {
    this.cache.set(credential, entry);
    let credentials = this.byActor.get(entry.caller.actor);
    if (!credentials) {
      credentials = new Set();
      this.byActor.set(entry.caller.actor, credentials);
    }
    credentials.add(credential);
  }

  private drop(credential: string, entry: Cached): void {
    this.cache.delete(credential);
    const credentials = this.byActor.get(entry.caller.actor);
    credentials?.delete(credential);
    if (credentials?.size === 0) this.byActor.delete(entry.caller.actor);
  }

  /** The credential's caller (cached), or why it is refused. */
  async authenticate(credential: string): Promise<Authenticated | Refusal> {
    const cached = this.cached(credential);
    if (cached) return cached;
    // The generation a lookup started in: a `forget` while it ran (a key deleted meanwhile) means
    // its answer may already be stale, so it answers this request but is not kept.
    const generation = this.generation;
    const resolved = await this.resolve(credential);
    if (!("caller" in resolved)) return resolved;
    if (credential.length <= maxCachedLength && generation === this.generation) {
      // Bounded: the entry kept longest goes first (a Map iterates in insertion order).
      const oldest =
        this.cache.size >= this.limits.maxEntries ? this.cache.entries().next().value : undefined;
      if (oldest) this.drop(...oldest);
      const expires = Math.min(
        Date.now() + this.limits.ttlMs,
        resolved.expiresAt ?? Number.POSITIVE_INFINITY,
      );
      this.keep(credential, { caller: resolved.caller, expires });
    }
    return resolved.caller;
  }

  /**
   * The credential as a new request's would resolve, without the cache: an open subscription
   * checks its own this way for as long as it streams.
   */
  resolve(credential: string): Promise<Resolution> {
    return looksLikeJwt(credential) ? this.fromToken(credential) : this.fromApiKey(credential);
  }

  private async fromToken(token: string): Promise<Resolution> {
    const claims = await verifyToken(this.secret, token);
    if (!claims) return { refused: "is not valid" };
    const [user] = await this.db.query<{
      actor: number;
      username: string;
      email: string;
      is_admin: boolean;
      jwt_secret: string;
    }>({
      text: `SELECT "actor", "username", "email", "is_admin", "jwt_secret" FROM "user" WHERE "id" = $1::int4`,
      values: [claims.id],
    });
    if (!user) return { refused: "belongs to a deleted user" };
    // A new password rotates jwt_secret (core/write/rules/user.ts).
    if (user.jwt_secret !== claims.jwt_secret) return { refused: "was ended by a password change" };
    const caller: Authenticated = {
      kind: "user",
      actor: user.actor,
      userId: claims.id,
      username: user.username,
      email: user.email,
      isAdmin: user.is_admin,
      session: claims,
    };
    // Verified above: its exp is the signed one.
    const { exp } = decodeJwt(token);
    return { caller, expiresAt: exp === undefined ? undefined : exp * 1000 };
  }

  private async fromApiKey(key: string): Promise<Resolution> {
    const row = await this.keys.get(hashKey(key));
    if (!row) return { refused: "is unknown or was revoked" };
    if (!row.live) return { refused: "expired" };
    const caller = callerOfRow(row);
    if (!caller) return { refused: "belongs to a user, fleet or device that was deleted" };
    return { caller, expiresAt: row.expiry_date === null ? undefined : new Date(row.expiry_date).getTime() };
  }
}

// What `callerOfRow` reads of an actor (a KeyRow's columns but `actor`): its user, fleet or device.
const actorColumns = `u."id" AS user_id, u."username", u."email", u."is_admin",
                  a."id" AS application_id, a."slug",
                  d."id" AS device_id, d."uuid", d."belongs_to__application" AS device_application`;
const actorJoins = (actor: string) => `LEFT JOIN "user" u ON u."actor" = ${actor}
             LEFT JOIN "application" a ON a."actor" = ${actor}
             LEFT JOIN "device" d ON d."actor" = ${actor}`;

type ApiKeyRow = KeyRow & { key_hash: string; expiry_date: Date | string | null; live: boolean };

/** The rows of the API keys whose hashes are `hashes`, by hash (a revoked key has none). */
async function apiKeyRows(db: Executor, hashes: readonly string[]): Promise<ReadonlyMap<string, ApiKeyRow>> {
  const rows = await db.query<ApiKeyRow>({
    text: `SELECT k."key_hash", k."is_of__actor" AS actor, k."expiry_date",
                  (k."expiry_date" IS NULL OR k."expiry_date" > now()) AS "live", ${actorColumns}
             FROM "api_key" k ${actorJoins('k."is_of__actor"')}
            WHERE k."key_hash" = ANY($1::text[])`,
    values: [hashes],
  });
  return new Map(rows.map((row) => [row.key_hash, row]));
}

/**
 * The caller an actor is now (its user, with the admin flag as it is now, or its device or fleet),
 * or undefined when none is left. Work that runs later on a caller's behalf (a command job's
 * batches) acts as this, not as the request that started it.
 */
export async function callerOfActor(db: Executor, actor: number): Promise<Authenticated | undefined> {
  const [row] = await db.query<KeyRow>({
    text: `SELECT t."id" AS actor, ${actorColumns}
             FROM "actor" t ${actorJoins('t."id"')}
            WHERE t."id" = $1::int4`,
    values: [actor],
  });
  return row ? callerOfRow(row) : undefined;
}

/** The caller an actor's row is: its user, else its device, else its fleet. */
function callerOfRow(row: KeyRow): Authenticated | undefined {
  if (row.user_id !== null) {
    return {
      kind: "user",
      actor: row.actor,
      userId: row.user_id,
      username: row.username ?? "",
      email: row.email ?? "",
      isAdmin: row.is_admin === true,
      session: undefined,
    };
  }
  if (row.device_id !== null && row.device_application !== null) {
    return {
      kind: "device",
      actor: row.actor,
      deviceId: row.device_id,
      uuid: row.uuid ?? "",
      applicationId: row.device_application,
    };
  }
  if (row.application_id !== null)
    return {
      kind: "application",
      actor: row.actor,
      applicationId: row.application_id,
      slug: row.slug ?? "",
    };
  return undefined;
}

/** `Authorization: Bearer <jwt or key>`, else `?apikey=`. */
export function credentialOf(
  headers: { authorization?: string | undefined },
  query: unknown,
): string | undefined {
  const bearer = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? "")?.[1];
  if (bearer) return bearer;
  const apikey = (query as { apikey?: unknown } | undefined)?.apikey;
  return typeof apikey === "string" && apikey !== "" ? apikey : undefined;
}

/**
 * Whether the request carries something meant as a credential: a non-empty `Authorization` header
 * (of any scheme) or `?apikey=`. One that does not resolve to a caller is a 401, never anonymous.
 */
export function presentsCredential(headers: { authorization?: string | undefined }, query: unknown): boolean {
  if ((headers.authorization ?? "").trim() !== "") return true;
  const apikey = (query as { apikey?: unknown } | undefined)?.apikey;
  return apikey !== undefined && apikey !== "";
}
