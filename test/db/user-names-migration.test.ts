import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, readMigrations } from "../../src/db/migrate.ts";
import { databaseKinds, freshDatabase, type TestDatabase } from "../support/databases.ts";

// Issue 30: migration 20261202000100 makes usernames and e-mail addresses unique without case. On a
// database where users already clash, it renames and drops nothing: it stops, changing nothing, and
// names the users by id (never their addresses); once an operator has changed them, it applies.

const MIGRATION = "20261202000100_user_names_case_insensitive";

describe.each(databaseKinds)("the case-insensitive user names migration on %s", (kind) => {
  let test: TestDatabase;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    test = await freshDatabase(kind, { empty: true });
    await migrate(
      test.db,
      readMigrations().filter((migration) => migration.name < MIGRATION),
    );
    for (const [username, email] of [
      ["ada", "ada@example.com"],
      ["Ada", "ada-two@example.com"],
      ["grace", "Grace@Example.com"],
      ["grace2", "grace@example.com"],
      ["linus", "linus@example.com"],
    ]) {
      const [user] = await test.db.query<{ id: number }>({
        text: `WITH a AS (INSERT INTO "actor" DEFAULT VALUES RETURNING "id")
               INSERT INTO "user" ("actor", "username", "email", "password", "jwt_secret")
               SELECT a."id", $1::text, $2::text, 'x', 'x' FROM a RETURNING "id"`,
        values: [username, email],
      });
      ids[username] = user?.id as number;
    }
  });
  afterAll(() => test.drop());

  const applied = async () =>
    (
      await test.db.query<{ n: number }>({
        text: `SELECT count(*)::int AS n FROM "_prisma_migrations" WHERE migration_name = $1`,
        values: [MIGRATION],
      })
    )[0]?.n;

  it("stops on users who clash, naming them by id only, and changes nothing", async () => {
    const failure = await migrate(test.db).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(failure).toContain(`Migration ${MIGRATION} failed`);
    expect(failure).toContain(`users ${ids.ada}, ${ids.Ada} share a username`);
    expect(failure).toContain(`users ${ids.grace}, ${ids.grace2} share an e-mail address`);
    expect(failure).not.toMatch(/example\.com/i);
    expect(failure).not.toContain("linus");
    expect(await applied()).toBe(0);
    const users = await test.db.query({
      text: `SELECT "username", "email" FROM "user" ORDER BY "id"`,
      values: [],
    });
    expect(users).toEqual([
      { username: "ada", email: "ada@example.com" },
      { username: "Ada", email: "ada-two@example.com" },
      { username: "grace", email: "Grace@Example.com" },
      { username: "grace2", email: "grace@example.com" },
      { username: "linus", email: "linus@example.com" },
    ]);
  });

  it("applies once the operator has changed them, and then refuses new clashes", async () => {
    await test.db.query({
      text: `UPDATE "user" SET "username" = 'ada-lovelace' WHERE "id" = $1::int4`,
      values: [ids.Ada],
    });
    await test.db.query({
      text: `UPDATE "user" SET "email" = 'grace2@example.com' WHERE "id" = $1::int4`,
      values: [ids.grace2],
    });
    expect(await migrate(test.db)).toContain(MIGRATION);
    expect(await applied()).toBe(1);
    await expect(
      test.db.query({
        text: `UPDATE "user" SET "email" = 'LINUS@example.com' WHERE "id" = $1::int4`,
        values: [ids.ada],
      }),
    ).rejects.toMatchObject({ code: "23505" });
  });
});
