import { randomBytes } from "node:crypto";
import { HOST_OS_ORGANIZATION } from "../core/write/rules/device-type.ts";
import type { Executor } from "../db/database.ts";

// balena finds the device types it supports through their host OS fleets: balena-sdk's
// deviceType.getAllSupported (both lines) sends
//   device_type?$filter=is_default_for__application/any(idfa: idfa/is_host eq true and
//     idfa/is_archived eq false and idfa/owns__release/any(r: r/status eq 'success' and
//     r/is_final eq true and r/is_invalidated eq false))
// So every device type of the catalogue gets one, as in balena: a fleet of the system organization
// `balena_os`, named by the slug, `is_host`, with one final, successful release of the balenaOS
// version the simulated supervisor reports. It is a public fleet, so everyone who may list the
// device type (anonymous callers included) reads the fleet row and that release and nothing
// else; the host fleet of a private device type is not public (admins only, as the device type).
// A DISCONTINUED device type's host fleet is archived: it is no longer supported.
// System write: the catalogue's own rows, beside the catalogue's import (store.ts).

const HANDLE = "balena_os";
/** The balenaOS version of `fleetgate supervisor` (its os_version, "balenaOS 6.0.13"). */
const HOST_OS_VERSION = "6.0.13";

/** The organization of the host fleets, made on first use; its id is kept in `setting`. */
async function hostOrganization(tx: Executor): Promise<number> {
  // Two imports at once must not make two organizations.
  await tx.query({
    text: `SELECT pg_advisory_xact_lock(hashtext($1::text))`,
    values: [HOST_OS_ORGANIZATION],
  });
  const [known] = await tx.query<{ id: number }>({
    text: `SELECT o."id" FROM "organization" o
            WHERE o."id" = (SELECT s."value"::int4 FROM "setting" s WHERE s."name" = $1::text)`,
    values: [HOST_OS_ORGANIZATION],
  });
  if (known) return known.id;
  // The handle is balena's; a user who already holds it keeps it, and the system takes another.
  let [made] = await tx.query<{ id: number }>({
    text: `INSERT INTO "organization" ("name", "handle") VALUES ('balenaOS', $1::text)
           ON CONFLICT ("handle") DO NOTHING RETURNING "id"`,
    values: [HANDLE],
  });
  if (!made) {
    [made] = await tx.query<{ id: number }>({
      text: `INSERT INTO "organization" ("name", "handle") VALUES ('balenaOS', $1::text) RETURNING "id"`,
      values: [`${HANDLE}-${randomBytes(4).toString("hex")}`],
    });
  }
  if (!made) throw new Error("the host OS organization was not made");
  await tx.query({
    text: `INSERT INTO "setting" ("name", "value") VALUES ($1::text, $2::text)
           ON CONFLICT ("name") DO UPDATE SET "value" = EXCLUDED."value"`,
    values: [HOST_OS_ORGANIZATION, String(made.id)],
  });
  return made.id;
}

/**
 * Gives every device type that has none its host OS fleet, and keeps the host fleets of the device
 * types named by `slugs` (every one when absent) public and archived as their device types say.
 */
export async function syncHostFleets(tx: Executor, slugs?: readonly string[]): Promise<void> {
  const organization = await hostOrganization(tx);
  const missing = await tx.query<{ id: number; slug: string; handle: string }>({
    text: `SELECT dt."id", dt."slug", o."handle" FROM "device_type" dt, "organization" o
            WHERE o."id" = $1::int4 AND NOT EXISTS (SELECT 1 FROM "application" a
              WHERE a."organization" = o."id" AND a."is_host" AND a."is_for__device_type" = dt."id")
            ORDER BY dt."id"`,
    values: [organization],
  });
  for (const deviceType of missing) {
    const [actor] = await tx.query<{ id: number }>({
      text: `INSERT INTO "actor" DEFAULT VALUES RETURNING "id"`,
      values: [],
    });
    const [fleet] = await tx.query<{ id: number }>({
      text: `INSERT INTO "application" ("actor", "organization", "app_name", "slug", "is_for__device_type", "is_host")
             VALUES ($1::int4, $2::int4, $3::text, $4::text, $5::int4, TRUE) RETURNING "id"`,
      values: [
        actor?.id,
        organization,
        deviceType.slug,
        `${deviceType.handle}/${deviceType.slug}`,
        deviceType.id,
      ],
    });
    if (!fleet) throw new Error(`no host fleet for ${deviceType.slug}`);
    // Final and successful, so the fleet's target: the first revision of its version.
    await tx.query({
      text: `WITH r AS (
               INSERT INTO "release" ("belongs_to__application", "commit", "status", "is_final", "semver",
                 "revision", "start_timestamp", "end_timestamp")
               VALUES ($1::int4, md5(random()::text || clock_timestamp()::text), 'success', TRUE, $2::text, 0, now(), now())
               RETURNING "id")
             UPDATE "application" SET "should_be_running__release" = (SELECT "id" FROM r) WHERE "id" = $1::int4`,
      values: [fleet.id, HOST_OS_VERSION],
    });
  }
  await tx.query({
    text: `UPDATE "application" a SET "is_public" = NOT dt."is_private", "is_archived" = (dt."state" = 'DISCONTINUED')
             FROM "device_type" dt
            WHERE a."organization" = $1::int4 AND a."is_host" AND dt."id" = a."is_for__device_type"
              AND ($2::text[] IS NULL OR dt."slug" = ANY($2::text[]))`,
    values: [organization, slugs ?? null],
  });
}
