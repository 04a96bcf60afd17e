import { databaseKinds } from "../support/databases.ts";
import { sdkScenario } from "../support/sdk/scenario.ts";

// Acceptance: balena-sdk 19.7.3, the last SDK line on /v6/, logged in as a normal member of the
// demo organization, against the real listener (test/support/sdk/world.ts).
for (const kind of databaseKinds) sdkScenario("v6", kind);
