import { execFile } from "node:child_process";
import { promisify } from "node:util";
import pg from "pg";
import { hashKey } from "../src/auth/api-keys.ts";
import { bin, repoRoot } from "./paths.ts";

const run = promisify(execFile);

export const FLEETS = 1_000;
export const DEVICES_PER_FLEET = 100;
export const RELEASES_PER_FLEET = 5;
export const TAGS_PER_DEVICE = 2;
// Bump when the generator changes, so an old data set is regenerated rather than reused.
const GENERATOR = `bench-data-v1:${FLEETS}x${DEVICES_PER_FLEET}`;
const MARKER = "bench_data";

/** What the workloads draw their keys from: real rows of the generated data set. */
export interface DataSet {
  /** Generated fleets, by id. */
  readonly fleetIds: number[];
  /** Uuids of online generated devices, shuffled. */
  readonly deviceUuids: string[];
  /** Generated in this run (false: reused). */
  readonly generated: boolean;
  readonly generateMs: number;
}

function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** CREATE DATABASE when missing: a clean checkout needs nothing but a PostgreSQL server. */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const admin = new pg.Client({ connectionString: withDatabase(url, "postgres") });
  await admin.connect();
  try {
    const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!rowCount) await admin.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
  } finally {
    await admin.end();
  }
}

/** The project's own migrator, so the schema and its indexes are exactly production's. */
export async function migrateDatabase(url: string): Promise<void> {
  await run(process.execPath, [bin, "migrate"], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: "silent" },
  });
}

/** The device type and organization every bench's generated fleets use (`bench-amd64`, `bench`). */
export const benchCatalogue = `
INSERT INTO cpu_architecture (slug) VALUES ('amd64') ON CONFLICT (slug) DO NOTHING;
INSERT INTO device_type (slug, name, is_of__cpu_architecture, state)
  SELECT 'bench-amd64', 'Bench amd64', id, 'RELEASED' FROM cpu_architecture WHERE slug = 'amd64'
  ON CONFLICT (slug) DO NOTHING;
INSERT INTO organization (name, handle) VALUES ('Bench', 'bench') ON CONFLICT (handle) DO NOTHING;
`;

// Ids are allocated past whatever the sequences have handed out, then the sequences are moved
// past them, so the generated rows never collide with rows the server creates later.
// The counts are this module's own integers, so they are written into the script as literals.
const generate = `
CREATE TEMP TABLE bench_base ON COMMIT DROP AS SELECT
  (SELECT greatest(coalesce(max(id), 0), (SELECT last_value FROM actor_id_seq)) FROM actor) AS actor,
  (SELECT greatest(coalesce(max(id), 0), (SELECT last_value FROM application_id_seq)) FROM application) AS app,
  (SELECT greatest(coalesce(max(id), 0), (SELECT last_value FROM device_id_seq)) FROM device) AS dev,
  (SELECT greatest(coalesce(max(id), 0), (SELECT last_value FROM release_id_seq)) FROM release) AS rel;

${benchCatalogue}
INSERT INTO actor (id)
  SELECT b.actor + g FROM bench_base b, generate_series(1, ${FLEETS} * (1 + ${DEVICES_PER_FLEET})) g;

INSERT INTO application (id, actor, organization, app_name, slug, is_for__device_type)
  SELECT b.app + f, b.actor + f, o.id, 'fleet-' || f, 'bench/fleet-' || f, t.id
  FROM bench_base b, generate_series(1, ${FLEETS}) f,
       (SELECT id FROM organization WHERE handle = 'bench') o,
       (SELECT id FROM device_type WHERE slug = 'bench-amd64') t;

INSERT INTO release (id, belongs_to__application, commit, status, semver, start_timestamp, end_timestamp)
  SELECT b.rel + (f - 1) * ${RELEASES_PER_FLEET} + r, b.app + f, md5('bench-release-' || f || '-' || r), 'success',
         '1.' || r || '.0', now() - r * interval '1 day', now() - r * interval '1 day' + interval '5 minutes'
  FROM bench_base b, generate_series(1, ${FLEETS}) f, generate_series(1, ${RELEASES_PER_FLEET}) r;

UPDATE application a SET should_be_running__release = b.rel + (a.id - b.app - 1) * ${RELEASES_PER_FLEET} + ${RELEASES_PER_FLEET}
  FROM bench_base b WHERE a.id > b.app AND a.id <= b.app + ${FLEETS};

-- Device names are not in id order, so $orderby=device_name really sorts; two thirds are online.
INSERT INTO device (id, actor, belongs_to__application, device_name, is_of__device_type, uuid,
                    is_running__release, status, is_online, last_connectivity_event,
                    os_version, os_variant, supervisor_version, ip_address)
  SELECT b.dev + d, b.actor + ${FLEETS} + d, b.app + (d - 1) / ${DEVICES_PER_FLEET} + 1,
         'dev-' || substr(md5('bench-name-' || d), 1, 10), t.id, md5('bench-device-' || d),
         b.rel + ((d - 1) / ${DEVICES_PER_FLEET}) * ${RELEASES_PER_FLEET} + ${RELEASES_PER_FLEET}, 'Idle', d % 3 <> 0,
         now() - (d % 1000) * interval '1 minute',
         'balenaOS 6.0.13', 'prod', '17.1.4', '10.0.' || (d % 250) || '.' || (d % 200 + 1)
  FROM bench_base b, generate_series(1, ${FLEETS} * ${DEVICES_PER_FLEET}) d,
       (SELECT id FROM device_type WHERE slug = 'bench-amd64') t;

INSERT INTO device_tag (device, tag_key, value)
  SELECT b.dev + d, 'tag-' || k, 'value-' || (d % 17)
  FROM bench_base b, generate_series(1, ${FLEETS} * ${DEVICES_PER_FLEET}) d, generate_series(1, ${TAGS_PER_DEVICE}) k;

SELECT setval('actor_id_seq', (SELECT max(id) FROM actor));
SELECT setval('application_id_seq', (SELECT max(id) FROM application));
SELECT setval('device_id_seq', (SELECT max(id) FROM device));
SELECT setval('release_id_seq', (SELECT max(id) FROM release));
`;

async function generateRows(client: pg.Client): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query(generate);
    await client.query(
      `INSERT INTO setting (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = $2`,
      [MARKER, GENERATOR],
    );
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  }
  // Fresh statistics, or the planner guesses on a table it has never seen full.
  await client.query("ANALYZE");
}

/** Migrates, generates the data set unless this generator already made it, and reads the keys. */
export async function prepareData(url: string): Promise<DataSet> {
  await ensureDatabase(url);
  await migrateDatabase(url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ value: string }>("SELECT value FROM setting WHERE name = $1", [
      MARKER,
    ]);
    const reuse = rows[0]?.value === GENERATOR;
    const started = performance.now();
    if (!reuse) {
      if (rows[0]) throw new Error(`${url} holds another generator's data (${rows[0].value}); drop it first`);
      await generateRows(client);
    }
    const generateMs = performance.now() - started;
    const fleets = await client.query<{ id: number }>(
      `SELECT id FROM application WHERE slug LIKE 'bench/fleet-%' ORDER BY id`,
    );
    if (fleets.rowCount !== FLEETS) throw new Error(`expected ${FLEETS} fleets, found ${fleets.rowCount}`);
    const devices = await client.query<{ uuid: string }>(
      `SELECT d.uuid FROM device d JOIN application a ON a.id = d.belongs_to__application
       WHERE a.slug LIKE 'bench/fleet-%' AND d.is_online ORDER BY md5(d.uuid) LIMIT 5000`,
    );
    return {
      fleetIds: fleets.rows.map((row) => row.id),
      deviceUuids: devices.rows.map((row) => row.uuid),
      generated: !reuse,
      generateMs,
    };
  } finally {
    await client.end();
  }
}

/**
 * A fresh API key of a user made for the bench (`username`), an admin or, with `memberOf`, a
 * member of that organization. Only the key's hash is stored, so each run makes its own; the user
 * has no usable password (the hash is not scrypt) and cannot log in.
 */
async function createBenchKey(
  url: string,
  user: { username: string; isAdmin: boolean; memberOf?: number },
): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("BEGIN");
    let { rows } = await client.query<{ id: number; actor: number }>(
      `SELECT id, actor FROM "user" WHERE username = $1`,
      [user.username],
    );
    if (!rows[0]) {
      ({ rows } = await client.query<{ id: number; actor: number }>(
        `WITH a AS (INSERT INTO actor DEFAULT VALUES RETURNING id)
         INSERT INTO "user" (actor, username, email, password, jwt_secret, is_admin)
         SELECT a.id, $1, $1 || '@localhost', '!', 'bench', $2 FROM a RETURNING id, actor`,
        [user.username, user.isAdmin],
      ));
    }
    const { id, actor } = rows[0] as { id: number; actor: number };
    if (user.memberOf !== undefined)
      await client.query(
        `INSERT INTO organization_membership ("user", is_member_of__organization, organization_membership_role)
         SELECT $1, $2, r.id FROM organization_membership_role r WHERE r.name = 'member'
         ON CONFLICT ("user", is_member_of__organization) DO NOTHING`,
        [id, user.memberOf],
      );
    const key = crypto.randomUUID().replaceAll("-", "") + crypto.randomUUID().replaceAll("-", "");
    await client.query(`INSERT INTO api_key (is_of__actor, name, key_hash) VALUES ($1, 'bench', $2)`, [
      actor,
      hashKey(key),
    ]);
    await client.query("COMMIT");
    return key;
  } finally {
    await client.end();
  }
}

/** An API key of the bench's admin user. */
export function createAdminKey(url: string): Promise<string> {
  return createBenchKey(url, { username: "bench-admin", isAdmin: true });
}

/**
 * An API key of a normal user who is a member (not an administrator) of the organization that
 * owns the generated fleets: it sees every bench fleet, as the admin does, through the permission
 * predicate of a member.
 */
export async function createMemberKey(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let organizations: number[];
  try {
    const { rows } = await client.query<{ organization: number }>(
      `SELECT DISTINCT organization FROM application WHERE slug LIKE 'bench/fleet-%'`,
    );
    organizations = rows.map((row) => row.organization);
  } finally {
    await client.end();
  }
  const [organization] = organizations;
  if (organization === undefined || organizations.length !== 1)
    throw new Error(`the bench fleets belong to ${organizations.length} organizations, expected 1`);
  return createBenchKey(url, { username: "bench-member", isAdmin: false, memberOf: organization });
}
