import { databaseKinds } from "../support/databases.ts";
import { sdkScenario } from "../support/sdk/scenario.ts";

// Acceptance: the newest balena-sdk from the registry (the `balena-sdk-latest` alias), which speaks
// /v7/, logged in as a normal member of the demo organization, against the real listener, through
// the same scenario as 19.7.3 on /v6/ (test/support/sdk/world.ts).
for (const kind of databaseKinds) sdkScenario("v7", kind);
