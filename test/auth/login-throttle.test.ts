import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultThrottleOptions } from "../../src/auth/throttle.ts";
import { databaseKinds } from "../support/databases.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

// POST /login_ under attack, through the real server: failures are throttled per (username,
// address) pair, per address and per username, with a growing Retry-After instead of a lock, so an
// attacker elsewhere cannot lock the owner out.

interface Reply {
  readonly status: number;
  readonly retryAfter: number | undefined;
  readonly raw: string;
}

const { pair, address } = defaultThrottleOptions;

describe.each(databaseKinds)("POST /login_ throttling on %s", (kind) => {
  let server: TestServer;
  let addresses = 0;
  let users = 0;

  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server.close());

  /** A client address no other test uses, so the per-address allowance never crosses tests. */
  const freshAddress = () => {
    addresses += 1;
    return `10.30.${Math.floor(addresses / 250)}.${(addresses % 250) + 1}`;
  };

  async function login(username: string, password: string, remoteAddress: string): Promise<Reply> {
    const response = await server.app.inject({
      method: "POST",
      url: "/login_",
      headers: { "content-type": "application/json", authorization: "" },
      payload: JSON.stringify({ username, password }),
      remoteAddress,
    });
    const retryAfter = response.headers["retry-after"];
    return {
      status: response.statusCode,
      retryAfter: retryAfter === undefined ? undefined : Number(retryAfter),
      raw: response.body,
    };
  }

  async function createUser(label: string): Promise<{ username: string; password: string }> {
    users += 1;
    const username = `${label}-${users}`;
    const password = `secret-${username}-pw`;
    const response = await server.app.inject({
      method: "POST",
      url: "/v6/user",
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({ username, email: `${username}@example.com`, password }),
    });
    expect(response.statusCode, response.body).toBe(201);
    return { username, password };
  }

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** The statuses of `pair.free + 1` wrong passwords, then of one more at once. */
  async function hammer(username: string, from: string): Promise<Reply[]> {
    const replies: Reply[] = [];
    for (let attempt = 0; attempt <= pair.free + 1; attempt++)
      replies.push(await login(username, "wrong", from));
    return replies;
  }

  it("answers a pair past its free failures with 429 and a Retry-After that grows", async () => {
    const user = await createUser("pair");
    const from = freshAddress();
    const replies = await hammer(user.username, from);
    expect(replies.map((reply) => reply.status)).toEqual([...Array(pair.free + 1).fill(401), 429]);
    const first = replies.at(-1) as Reply;
    expect(first.retryAfter).toBe(1);
    // Even the right password waits: the pair is throttled, not the password checked.
    expect((await login(user.username, user.password, from)).status).toBe(429);
    await sleep((first.retryAfter ?? 0) * 1000 + 100);
    expect((await login(user.username, "wrong", from)).status).toBe(401);
    const second = await login(user.username, "wrong", from);
    expect(second.status).toBe(429);
    expect(second.retryAfter).toBe(2);
    // The owner at another address is let in at once.
    expect((await login(user.username, user.password, freshAddress())).status).toBe(200);
  });

  it("treats an unknown username exactly like a known one", async () => {
    const user = await createUser("known");
    const known = await hammer(user.username, freshAddress());
    const unknown = await hammer(`nobody-${kind}-${users}`, freshAddress());
    expect(unknown.map(({ status, retryAfter }) => [status, retryAfter])).toEqual(
      known.map(({ status, retryAfter }) => [status, retryAfter]),
    );
  });

  it("lets the owner in while an attacker hammers the username from many other addresses", async () => {
    const user = await createUser("victim");
    // Ten addresses, each to its pair's limit: 60 failures for one username (six times what once
    // locked any account), and every attacker pair waits.
    for (let attacker = 0; attacker < 10; attacker++) {
      const replies = await hammer(user.username, freshAddress());
      expect(replies.at(-1)?.status).toBe(429);
    }
    expect((await login(user.username, user.password, freshAddress())).status).toBe(200);
    // 71 logins one after another, each a password hash and the shared throttle's statements: on two
    // loaded cores that is more than the default 30 s.
  }, 120_000);

  it("throttles one address trying many usernames, and a good login from it does not reset that", async () => {
    const user = await createUser("fromaddress");
    const from = freshAddress();
    for (let attempt = 0; attempt < address.free; attempt++) {
      const reply = await login(`nobody-${kind}-${attempt}`, "whatever-pw", from);
      expect(reply.status, `attempt ${attempt}: ${reply.raw}`).toBe(401);
    }
    expect((await login(user.username, user.password, from)).status).toBe(200);
    expect((await login(`nobody-${kind}-last`, "whatever-pw", from)).status).toBe(401);
    const refused = await login(user.username, user.password, from);
    expect(refused.status, refused.raw).toBe(429);
    expect(refused.retryAfter).toBe(1);
    // The same user from another address logs in.
    expect((await login(user.username, user.password, freshAddress())).status).toBe(200);
  });

  it("forgives the owner's own typos once they log in", async () => {
    const user = await createUser("typos");
    const from = freshAddress();
    for (let round = 0; round < 3; round++) {
      for (let attempt = 0; attempt < pair.free; attempt++)
        expect((await login(user.username, "wrong-password", from)).status).toBe(401);
      expect((await login(user.username, user.password, from)).status).toBe(200);
    }
  });
});
