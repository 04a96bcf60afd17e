import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoginThrottle } from "../../src/auth/memory-throttle.ts";
import { SharedLoginThrottle } from "../../src/auth/shared-throttle.ts";
import type { LoginAttempt, ThrottleOptions } from "../../src/auth/throttle.ts";
import { ThrottleStore } from "../../src/auth/throttle-store.ts";
import { TooManyRequests } from "../../src/errors.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// The throttle that counts in the database (src/auth/shared-throttle.ts over throttle-store.ts)
// against the in-memory one (memory-throttle.ts), which holds the rules test/auth/throttle.test.ts
// checks: on any sequence of attempts they decide alike. And what happens when the database is lost.

const options: ThrottleOptions = {
  pair: { free: 2, drainMs: 30_000 },
  address: { free: 4, drainMs: 5_000 },
  // Low, so that generated sequences often put an account under attack.
  username: { free: 3, drainMs: 10_000 },
  baseDelayMs: 1_000,
  maxDelayMs: 20_000,
  maxKeys: 1_000,
};

/** Seconds the attempt must wait (0: it went ahead, and `attempt` is it). */
async function tryBegin(
  begin: () => LoginAttempt | Promise<LoginAttempt>,
): Promise<{ wait: number; attempt?: LoginAttempt }> {
  try {
    return { wait: 0, attempt: await begin() };
  } catch (error) {
    if (!(error instanceof TooManyRequests)) throw error;
    return { wait: error.retryAfterSeconds };
  }
}

// Few users and addresses, so keys meet again; IPv6 addresses of one /48 share a pair.
const usernames = ["admin", "alice", "bob"];
const addresses = ["192.0.2.1", "192.0.2.2", "2001:db8:1:1::1", "2001:db8:1:2::7", "2001:db8:2::1"];
const step = fc.record({
  user: fc.integer({ min: 0, max: usernames.length - 1 }),
  from: fc.integer({ min: 0, max: addresses.length - 1 }),
  // Several attempts begun at once, each then ended: a burst.
  burst: fc.integer({ min: 1, max: 3 }),
  succeed: fc.boolean(),
  laterMs: fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 40_000 })),
});

describe.each(databaseKinds)("the login throttle in the database on %s", (kind) => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await freshDatabase(kind);
  });
  afterAll(() => test.drop());

  it("decides every attempt of a generated sequence as the in-memory throttle does", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 60 }), async (steps) => {
        // A secret of its own per run: no key of an earlier run is found again.
        const shared = new SharedLoginThrottle(new ThrottleStore(test.db, `run-${run++}`, options), options);
        const memory = new LoginThrottle(options);
        let now = 1_000_000;
        try {
          for (const { user, from, burst, succeed, laterMs } of steps) {
            now += laterMs;
            const [username, address] = [usernames[user] ?? "", addresses[from] ?? ""];
            const begun: [LoginAttempt | undefined, LoginAttempt | undefined][] = [];
            for (let i = 0; i < burst; i++) {
              const inMemory = await tryBegin(() => memory.begin(username, address, now));
              const inDatabase = await tryBegin(() => shared.begin(username, address, now));
              expect(inDatabase.wait, `${username} from ${address} at ${now}`).toBe(inMemory.wait);
              begun.push([inMemory.attempt, inDatabase.attempt]);
            }
            for (const [inMemory, inDatabase] of begun) {
              if (succeed) {
                inMemory?.succeeded(now);
                await inDatabase?.succeeded(now);
              } else {
                inMemory?.failed(now);
                await inDatabase?.failed(now);
              }
            }
          }
        } finally {
          shared.close();
        }
        expect(shared.localSize).toBe(0);
      }),
      { numRuns: 60 },
    );
  }, 120_000);

  it("lets the owner who mistyped during an attack and then logged in log in again from there", async () => {
    const shared = new SharedLoginThrottle(new ThrottleStore(test.db, "owner", options), options);
    const memory = new LoginThrottle(options);
    const owner = "198.51.100.7";
    const now = 1_000_000;
    for (const throttle of [memory, shared]) {
      for (let i = 0; i <= options.username.free; i++)
        await (await throttle.begin("admin", `198.18.0.${i}`, now)).failed(now);
      await (await throttle.begin("admin", owner, now)).failed(now);
      // Once the account's wait is over, the owner logs in: the pair's failures are forgiven.
      await (await throttle.begin("admin", owner, now + 5_000)).succeeded(now + 5_000);
      // Later, under attack still, with the account waiting after a fresh address's guess, and
      // the owner's address drained: the owner is clean again and goes ahead.
      const later = now + 6_000;
      await (await throttle.begin("admin", "198.18.1.1", later - 100)).failed(later - 100);
      expect((await tryBegin(() => throttle.begin("admin", "198.18.1.1", later))).wait).toBeGreaterThan(0);
      expect((await tryBegin(() => throttle.begin("admin", owner, later))).wait).toBe(0);
    }
    shared.close();
  });

  it("stores no username and no address, only keyed hashes of them", async () => {
    const shared = new SharedLoginThrottle(new ThrottleStore(test.db, "secret", options), options);
    await (await shared.begin("Plain-Name", "203.0.113.77", 1_000)).failed(1_000);
    shared.close();
    const rows = await test.db.query<{ key: string }>({
      text: `SELECT "key" FROM "login_throttle"`,
      values: [],
    });
    expect(rows.length).toBeGreaterThan(0);
    for (const { key } of rows) expect(key).toMatch(/^[\w-]{43}$/);
  });
});

describe.each(databaseKinds)("the login throttle when the database is lost, on %s", (kind) => {
  let test: TestDatabase;
  let lose: () => Promise<void>;
  let restore: () => Promise<void>;

  // The embedded database was closed by the test already.
  afterAll(() => (kind === "embedded" ? undefined : test.drop()));

  /** A throttle on `db` that notes each failure of its store. */
  function throttleOn(failures: unknown[]) {
    return new SharedLoginThrottle(new ThrottleStore(test.db, "secret", options), options, {
      storeFailed: (error) => failures.push(error),
    });
  }

  it("counts on the instance alone meanwhile: nobody is locked out, the allowances hold per instance", async () => {
    const failures: unknown[] = [];
    const throttle = throttleOn(failures);
    const now = 1_000_000;
    // Before: the attacker's pair uses its free failures in the shared store.
    for (let i = 0; i <= options.pair.free; i++)
      await (await throttle.begin("victim", "198.18.0.1", now)).failed(now);
    expect((await tryBegin(() => throttle.begin("victim", "198.18.0.1", now))).wait).toBe(1);
    expect(failures).toEqual([]);

    await lose();
    // The owner from their own address logs in: the throttle lets the attempt go.
    const owner = await tryBegin(() => throttle.begin("victim", "198.51.100.7", now));
    expect(owner.wait).toBe(0);
    await owner.attempt?.succeeded(now);
    expect(failures.length).toBeGreaterThan(0);
    // An attacker is held by this instance's own count: its pair's allowance, then a wait.
    const waits: number[] = [];
    for (let i = 0; i <= options.pair.free + 1; i++) {
      const attempt = await tryBegin(() => throttle.begin("victim", "198.18.0.2", now));
      waits.push(attempt.wait);
      await attempt.attempt?.failed(now);
    }
    expect(waits).toEqual([...Array(options.pair.free + 1).fill(0), 1]);
    expect(throttle.localSize).toBeGreaterThan(0);

    await restore();
    // The embedded database does not come back within the process.
    if (kind === "embedded") return throttle.close();
    // Back on the store: what it counted before holds, and so does what this instance counted meanwhile.
    const later = now + 500;
    expect((await tryBegin(() => throttle.begin("victim", "198.18.0.1", later))).wait).toBeGreaterThan(0);
    expect((await tryBegin(() => throttle.begin("victim", "198.18.0.2", later))).wait).toBeGreaterThan(0);
    const fresh = await tryBegin(() => throttle.begin("someone", "198.51.100.8", later));
    expect(fresh.wait).toBe(0);
    await fresh.attempt?.succeeded(later);
    throttle.close();
  }, 60_000);

  beforeAll(async () => {
    test = await freshDatabase(kind);
    if (kind === "embedded") {
      // The embedded database lives in the process: lost, it is closed, and stays so.
      lose = () => test.db.close();
      restore = async () => {};
      return;
    }
    // PostgreSQL refuses every connection to the database, and ends the ones open.
    const name = new URL(test.url ?? "").pathname.slice(1);
    const admin = async (text: string) => {
      const client = new pg.Client({ connectionString: test.url?.replace(`/${name}`, "/postgres") });
      await client.connect();
      try {
        await client.query(text);
      } finally {
        await client.end();
      }
    };
    lose = async () => {
      await admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
    };
    restore = () => admin(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
  });
});
