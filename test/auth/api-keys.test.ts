import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../src/auth/api-keys.ts";
import { freshDatabase, type TestDatabase } from "../support/databases.ts";

describe("API keys", () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await freshDatabase("embedded");
    await test.db.query({ text: `INSERT INTO "actor" DEFAULT VALUES`, values: [] });
  });
  afterAll(() => test.drop());

  // A key starting with "-" was read as a flag by `fleetgate supervisor --provisioning-key <key>`.
  // Issue 30: 32 characters, as balena's keys are (128 random bits).
  it("are word tokens that can never look like a command-line flag", async () => {
    for (let i = 0; i < 200; i++) {
      const key = await createApiKey(test.db, { actor: 1 });
      expect(key).toMatch(/^[0-9a-f]{32}$/);
    }
  });
});
