import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../../src/accounts.ts";
import { createApiKey, hashKey } from "../../src/auth/api-keys.ts";
import { type Authenticated, Authenticator, type Refusal } from "../../src/auth/caller.ts";
import type { Executor, Statement } from "../../src/db/database.ts";
import { buildModel } from "../../src/model/registry.ts";
import { freshDatabase, type TestDatabase } from "../support/databases.ts";

/** The caller a credential resolved to, or undefined when it was refused. */
async function callerOf(resolved: Promise<Authenticated | Refusal>): Promise<Authenticated | undefined> {
  const found = await resolved;
  return "refused" in found ? undefined : found;
}

// Issue 28: the credential cache is looked up by the credential itself (no hash per request). It
// must still forget at once, stay bounded and never outlive a credential.

describe("the credential cache", () => {
  let test: TestDatabase;
  let actor: number;

  /** The test database, counting the lookups that reach it; `gate` holds each answer back until it resolves. */
  function counted(gate?: () => Promise<void>) {
    const executor = {
      lookups: 0,
      async query<Row>(statement: Statement): Promise<Row[]> {
        executor.lookups++;
        const rows = await test.db.query<Row>(statement);
        await gate?.();
        return rows;
      },
      script: (sql: string) => test.db.script(sql),
    } satisfies Executor & { lookups: number };
    return executor;
  }

  const secret = new Uint8Array(32).fill(7);
  const newKey = (name: string, expiryDate?: string) =>
    createApiKey(test.db, { actor, name, ...(expiryDate ? { expiryDate } : {}) });
  const deleteKey = (name: string) =>
    test.db.query({ text: `DELETE FROM "api_key" WHERE "name" = $1::text`, values: [name] });

  beforeAll(async () => {
    test = await freshDatabase("embedded");
    const userId = await createUser(test.db, buildModel(), {
      username: "cached",
      email: "cached@example.com",
      password: "a long enough password",
    });
    const [row] = await test.db.query<{ actor: number }>({
      text: `SELECT "actor" FROM "user" WHERE "id" = $1::int4`,
      values: [userId],
    });
    actor = row?.actor as number;
  });
  afterAll(() => test.drop());

  it("answers a repeated credential without the database, until it is forgotten", async () => {
    const db = counted();
    const authenticator = new Authenticator(db, secret);
    const key = await newKey("repeated");
    expect((await callerOf(authenticator.authenticate(key)))?.actor).toBe(actor);
    expect((await callerOf(authenticator.authenticate(key)))?.actor).toBe(actor);
    expect(db.lookups).toBe(1);

    // A key deleted is refused on the next request once the write that deleted it forgets.
    await deleteKey("repeated");
    authenticator.forget();
    expect(await callerOf(authenticator.authenticate(key))).toBeUndefined();
    expect(db.lookups).toBe(2);
  });

  it("forgets one actor's credentials and keeps the others'", async () => {
    const db = counted();
    const authenticator = new Authenticator(db, secret, { maxEntries: 2 });
    const [mine, evicted, kept] = await Promise.all(["a0", "a1", "a2"].map((name) => newKey(name)));
    const otherId = await createUser(test.db, buildModel(), {
      username: "other-cached",
      email: "other-cached@example.com",
      password: "another long enough password",
    });
    const [otherUser] = await test.db.query<{ actor: number }>({
      text: `SELECT "actor" FROM "user" WHERE "id" = $1::int4`,
      values: [otherId],
    });
    const other = await createApiKey(test.db, { actor: otherUser?.actor as number, name: "theirs" });
    // Bounded at two: `mine` goes when `kept` comes, `evicted` when `other` comes.
    for (const key of [mine, evicted, kept, other] as string[]) await authenticator.authenticate(key);
    expect(db.lookups).toBe(4);
    authenticator.forgetActor(actor);
    // The other actor's credential is still known; this actor's `kept` is looked up again.
    expect((await callerOf(authenticator.authenticate(other)))?.actor).toBe(otherUser?.actor);
    expect(db.lookups).toBe(4);
    expect((await callerOf(authenticator.authenticate(kept as string)))?.actor).toBe(actor);
    expect(db.lookups).toBe(5);
  });

  it("keeps no answer of a lookup that a forget overtook", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let hold = true;
    const db = counted(() => (hold ? held : Promise.resolve()));
    const authenticator = new Authenticator(db, secret);
    const key = await newKey("overtaken");

    // The lookup read the key; the key is deleted (and the cache forgotten) before it answers.
    const pending = authenticator.authenticate(key);
    // Lookups are sent together at the end of the turn (db/grouped-lookup.ts).
    await new Promise((resolve) => setImmediate(resolve));
    await deleteKey("overtaken");
    authenticator.forget();
    release();
    hold = false;
    expect((await callerOf(pending))?.actor).toBe(actor);
    // The stale answer was not kept: the next request looks the key up, and is refused.
    expect(await callerOf(authenticator.authenticate(key))).toBeUndefined();
    expect(db.lookups).toBe(2);
  });

  it("stays bounded, letting the credential kept longest go first", async () => {
    const db = counted();
    const authenticator = new Authenticator(db, secret, { maxEntries: 3 });
    const keys = await Promise.all(["b0", "b1", "b2", "b3"].map((name) => newKey(name)));
    for (const key of keys) await authenticator.authenticate(key);
    expect(db.lookups).toBe(4);
    // b1–b3 are kept; b0 went when b3 came.
    for (const key of keys.slice(1)) await authenticator.authenticate(key);
    expect(db.lookups).toBe(4);
    await authenticator.authenticate(keys[0] as string);
    expect(db.lookups).toBe(5);
  });

  it("keeps a credential no longer than its time-out, nor than the credential itself", async () => {
    const db = counted();
    const authenticator = new Authenticator(db, secret, { ttlMs: 60_000 });
    const soon = new Date(Date.now() + 1_500).toISOString();
    const key = await newKey("expiring", soon);
    expect((await callerOf(authenticator.authenticate(key)))?.actor).toBe(actor);
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    expect(await callerOf(authenticator.authenticate(key))).toBeUndefined();
    expect(db.lookups).toBe(2);

    const short = new Authenticator(counted(), secret, { ttlMs: 50 });
    const other = await newKey("short-lived cache");
    expect((await callerOf(short.authenticate(other)))?.actor).toBe(actor);
    await deleteKey("short-lived cache");
    await new Promise((resolve) => setTimeout(resolve, 80));
    // Deleted without a forget (another instance's write): refused once the entry timed out.
    expect(await callerOf(short.authenticate(other))).toBeUndefined();
  });

  it("does not keep a credential longer than any the server issues", async () => {
    const db = counted();
    const authenticator = new Authenticator(db, secret);
    const long = "k".repeat(2_000);
    await test.db.query({
      text: `INSERT INTO "api_key" ("is_of__actor", "name", "key_hash") VALUES ($1::int4, 'long', $2::text)`,
      values: [actor, hashKey(long)],
    });
    expect((await callerOf(authenticator.authenticate(long)))?.actor).toBe(actor);
    expect((await callerOf(authenticator.authenticate(long)))?.actor).toBe(actor);
    expect(db.lookups).toBe(2);
  });
  // Issue 46: at a million devices' cadence the cache rarely holds a device's key (it calls every
  // few minutes), so the keys of requests that arrive together are looked up by one statement.
  it("looks up keys that arrive together in one statement, each with its own answer", async () => {
    const db = counted();
    const authenticator = new Authenticator(db, secret);
    const keys = await Promise.all(Array.from({ length: 20 }, (_, i) => newKey(`together-${i}`)));
    await newKey("revoked-together").then(async (revoked) => {
      await deleteKey("revoked-together");
      keys.push(revoked);
    });
    const callers = await Promise.all(
      [...keys, keys[0] as string].map((key) => callerOf(authenticator.authenticate(key))),
    );
    expect(db.lookups).toBe(1);
    expect(callers.map((caller) => caller?.actor)).toEqual([
      ...Array.from({ length: 20 }, () => actor),
      undefined,
      actor,
    ]);
  });

  it("looks a key up again when it is asked after its lookup was sent", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const db = counted(() => held);
    const authenticator = new Authenticator(db, secret);
    const key = await newKey("asked-twice");
    const first = authenticator.authenticate(key);
    await new Promise((resolve) => setImmediate(resolve));
    expect(db.lookups).toBe(1);
    // Deleted after the first lookup was sent: the second ask must not share its answer.
    await deleteKey("asked-twice");
    const second = authenticator.authenticate(key);
    release();
    expect((await callerOf(first))?.actor).toBe(actor);
    expect(await callerOf(second)).toBeUndefined();
    expect(db.lookups).toBe(2);
  });
});
