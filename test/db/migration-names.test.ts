import { describe, expect, it } from "vitest";
import { readMigrations } from "../../src/db/migrate.ts";
import { migrationNameProblems } from "../support/db/migration-names.ts";

// Names sort in creation order (README, "The data model and migrations"). These are the migrations
// shipped so far, in the order they were made; a new one must sort after the last of them (its
// name need not be added here, but adding it extends the rule to the ones after it).
const SHIPPED = [
  "20261122000000_init",
  "20261122010000_billing_event",
  "20261122020000_setting",
  "20261122030000_cpu_architecture_fleet_uuid",
  "20261122040000_device_heartbeat",
  "20261122050000_supervisor_command",
  "20261124220000_supervisor_command_request_id",
  "20261125000000_release_commit_per_success",
  "20261126000000_balena_model_surface",
  "20261127000000_release_tags_config_vars",
  "20261128000000_command_jobs",
  "20261129000000_fleet_change_notify",
  "20261201000100_command_job_request_fingerprint",
  "20261201000300_credential_change_notify",
  "20261202000000_command_job_pipeline",
  "20261202000100_user_names_case_insensitive",
  "20261202000300_v7_device_fields",
];

describe("migration names", () => {
  it("sort in the order the migrations were made, and none shipped is renamed", () => {
    const present = readMigrations().map((migration) => migration.name);
    expect(migrationNameProblems(SHIPPED, present)).toEqual([]);
  });

  it("refuse a new migration named by a date before the newest, a renamed one and a bad name", () => {
    const shipped = ["20261201000100_a", "20261202000300_b"];
    expect(migrationNameProblems(shipped, [...shipped, "20261202000400_next"])).toEqual([]);
    expect(migrationNameProblems(shipped, [...shipped, "20261126180000_today"])).toEqual([
      "20261126180000_today sorts before 20261202000300_b: a new migration is named after the newest one",
    ]);
    expect(migrationNameProblems(shipped, ["20261201000100_a", "20261202000200_b"])).toEqual([
      "20261202000300_b is missing: databases have applied it, so it may not be renamed or removed",
      "20261202000200_b sorts before 20261202000300_b: a new migration is named after the newest one",
    ]);
    expect(migrationNameProblems(["20261202000300_b", "20261201000100_a"], [])).toContainEqual(
      "20261201000100_a does not sort after 20261202000300_b",
    );
    expect(migrationNameProblems([], ["20261232000000_x", "2026120100_short"])).toEqual([
      "20261232000000_x: not <yyyymmddhhmmss>_<what>, a UTC time",
      "2026120100_short: not <yyyymmddhhmmss>_<what>, a UTC time",
    ]);
  });
});
