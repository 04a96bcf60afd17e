import { createHash } from "node:crypto";
import pg from "pg";
import { benchCatalogue } from "./data.ts";

// The device bench's data: N devices in a few fleets, as registration and a first state report
// leave them (online, running their fleet's release), each with its own device API key, written
// with `INSERT … SELECT generate_series` in chunks, so 1,000,000 devices take minutes.
//
// A device's uuid and key are functions of its number (and, for the key, of the run's salt), so
// the load generator computes them instead of reading a million keys back. A key is stored as the
// server stores one (src/auth/api-keys.ts `hashKey`): the hex SHA-256 of its text, a 32-character
// lowercase hex string as `createApiKey` makes.

export interface SeededFleet {
  readonly id: number;
  readonly uuid: string;
  /** The commit of the release its devices should run (and do). */
  readonly commit: string;
}

export interface Seeded {
  readonly devices: number;
  readonly salt: string;
  readonly fleets: readonly SeededFleet[];
  readonly ms: number;
}

export const RELEASES_PER_FLEET = 3;
// Rows per statement: big enough that per-statement costs vanish, small enough to log progress.
const CHUNK = 100_000;

const md5 = (text: string) => createHash("md5").update(text).digest("hex");

/** Device `n` (1-based) of the seeded set. */
export const deviceUuid = (n: number): string => md5(`bench-device-${n}`);
export const deviceKey = (salt: string, n: number): string => md5(`${salt}-key-${n}`);
/** Device `n`'s fleet: devices are dealt out to the fleets in turn. */
export const fleetOf = (fleets: readonly SeededFleet[], n: number): SeededFleet =>
  fleets[(n - 1) % fleets.length] as SeededFleet;

// A two-service release, so the v3 target has services, images and environments to build.
const composition = JSON.stringify({
  version: "2.1",
  services: {
    main: {
      build: ".",
      environment: { MODE: "bench" },
      labels: { "io.balena.features.supervisor-api": "1" },
    },
    sidecar: { image: "bench/sidecar:latest", environment: ["SIDECAR=1"] },
  },
  volumes: { data: {} },
});

const fleetRows = `
WITH made AS (
  INSERT INTO actor (id) SELECT nextval(pg_get_serial_sequence('actor', 'id')) FROM generate_series(1, $1::int4)
  RETURNING id),
numbered AS (SELECT id, row_number() OVER (ORDER BY id) AS f FROM made)
INSERT INTO application (actor, organization, app_name, slug, is_for__device_type)
SELECT n.id, o.id, 'devices-' || n.f, 'bench/devices-' || n.f, t.id
FROM numbered n, (SELECT id FROM organization WHERE handle = 'bench') o,
     (SELECT id FROM device_type WHERE slug = 'bench-amd64') t
RETURNING id`;

const releaseRows = `
INSERT INTO release (belongs_to__application, commit, status, semver, composition, start_timestamp, end_timestamp)
SELECT a.id, md5('bench-devices-release-' || a.id || '-' || r), 'success', '1.' || r || '.0', $2::jsonb,
       now() - (${RELEASES_PER_FLEET} - r) * interval '1 day', now() - (${RELEASES_PER_FLEET} - r) * interval '1 day'
FROM application a, generate_series(1, ${RELEASES_PER_FLEET}) r WHERE a.id = ANY($1::int4[])`;

// The newest release is each fleet's target. Fleet variables: three environment, two config.
const fleetTargets = `
UPDATE application a SET should_be_running__release = (
  SELECT r.id FROM release r WHERE r.belongs_to__application = a.id ORDER BY r.end_timestamp DESC LIMIT 1)
WHERE a.id = ANY($1::int4[])`;
const fleetVariables = [
  `INSERT INTO application_environment_variable (application, name, value)
   SELECT a, v.name, v.value || a FROM unnest($1::int4[]) a,
     (VALUES ('LOG_LEVEL', 'info-'), ('REGION', 'eu-'), ('FEATURE_FLAGS', 'a,b,c-')) v(name, value)`,
  `INSERT INTO application_config_variable (application, name, value)
   SELECT a, v.name, v.value FROM unnest($1::int4[]) a,
     (VALUES ('BALENA_SUPERVISOR_POLL_INTERVAL', '900000'), ('BALENA_HOST_CONFIG_gpu_mem', '16')) v(name, value)`,
];

interface Chunk {
  /** Actor and device ids are these plus the device's number. */
  readonly actorBase: number;
  readonly deviceBase: number;
  readonly first: number;
  readonly last: number;
  readonly fleets: readonly number[];
  readonly releases: readonly number[];
  readonly deviceType: number;
  readonly salt: string;
}

const numbers = "generate_series($2::int4, $3::int4) d";

/** The statements (and their values) that write devices `first`…`last`. */
function deviceRows(c: Chunk): [string, unknown[]][] {
  return [
    [`INSERT INTO actor (id) SELECT $1::int4 + d FROM ${numbers}`, [c.actorBase, c.first, c.last]],
    [
      `INSERT INTO device (id, actor, belongs_to__application, device_name, is_of__device_type, uuid,
         is_running__release, status, is_online, is_connected_to_vpn, api_heartbeat_state,
         last_connectivity_event, last_heartbeat_at, os_version, os_variant, supervisor_version, ip_address)
       SELECT $1::int4 + d, $4::int4 + d, ($5::int4[])[(d - 1) % cardinality($5::int4[]) + 1], 'device-' || d,
         $7::int4, md5('bench-device-' || d), ($6::int4[])[(d - 1) % cardinality($6::int4[]) + 1], 'Idle',
         true, true, 'online', now(), now(), 'balenaOS 6.0.13', 'prod', '17.1.4',
         '10.' || (d / 65536) % 256 || '.' || (d / 256) % 256 || '.' || d % 256
       FROM ${numbers}`,
      [c.deviceBase, c.first, c.last, c.actorBase, c.fleets, c.releases, c.deviceType],
    ],
    [
      `INSERT INTO api_key (is_of__actor, key_hash)
       SELECT $1::int4 + d, encode(sha256(convert_to(md5($4::text || '-key-' || d), 'UTF8')), 'hex')
       FROM ${numbers}`,
      [c.actorBase, c.first, c.last, c.salt],
    ],
    [
      `INSERT INTO device_environment_variable (device, name, value)
       SELECT $1::int4 + d, 'DEVICE_LABEL', 'device-' || d FROM ${numbers}`,
      [c.deviceBase, c.first, c.last],
    ],
    [
      `INSERT INTO device_config_variable (device, name, value)
       SELECT $1::int4 + d, 'BALENA_SUPERVISOR_PERSISTENT_LOGGING', CASE WHEN d % 2 = 0 THEN 'true' ELSE 'false' END
       FROM ${numbers}`,
      [c.deviceBase, c.first, c.last],
    ],
  ];
}

// Ids past whatever the sequences handed out; the sequences are moved past them afterwards.
const nextIds = `SELECT
  (SELECT greatest(coalesce(max(id), 0), (SELECT last_value FROM actor_id_seq)) FROM actor) AS actor,
  (SELECT greatest(coalesce(max(id), 0), (SELECT last_value FROM device_id_seq)) FROM device) AS device`;

type Query = (text: string, values?: unknown[]) => Promise<pg.QueryResult>;

async function seedFleets(query: Query, fleets: number): Promise<{ ids: number[]; releases: number[] }> {
  await query(benchCatalogue);
  const ids = (await query(fleetRows, [fleets])).rows.map((row) => row.id as number).sort((a, b) => a - b);
  await query(releaseRows, [ids, composition]);
  await query(fleetTargets, [ids]);
  for (const text of fleetVariables) await query(text, [ids]);
  const { rows } = await query(
    `SELECT should_be_running__release AS release FROM application WHERE id = ANY($1::int4[]) ORDER BY id`,
    [ids],
  );
  return { ids, releases: rows.map((row) => row.release as number) };
}

/** Seeds `devices` devices in `fleets` fleets into a migrated, empty database. */
export async function seedDevices(
  url: string,
  options: { devices: number; fleets: number; salt: string },
  log: (message: string) => void = () => {},
): Promise<Seeded> {
  const started = performance.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const query: Query = (text, values) => client.query(text, values);
  try {
    const fleets = await seedFleets(query, options.fleets);
    const base = (await query(nextIds)).rows[0] as { actor: number | string; device: number | string };
    const [{ id: deviceType }] = (await query(`SELECT id FROM device_type WHERE slug = 'bench-amd64'`))
      .rows as [{ id: number }];
    for (let first = 1; first <= options.devices; first += CHUNK) {
      const last = Math.min(options.devices, first + CHUNK - 1);
      const chunk: Chunk = {
        actorBase: Number(base.actor),
        deviceBase: Number(base.device),
        first,
        last,
        fleets: fleets.ids,
        releases: fleets.releases,
        deviceType,
        salt: options.salt,
      };
      for (const [text, values] of deviceRows(chunk)) await query(text, values);
      log(`seeded devices ${first}–${last} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
    await query(`SELECT setval('actor_id_seq', (SELECT max(id) FROM actor))`);
    await query(`SELECT setval('device_id_seq', (SELECT max(id) FROM device))`);
    // Fresh statistics, or the planner guesses on tables it has never seen full.
    await query("ANALYZE");
    const { rows } = await query(
      `SELECT a.id, a.uuid, r.commit FROM application a JOIN release r ON r.id = a.should_be_running__release
        WHERE a.id = ANY($1::int4[]) ORDER BY a.id`,
      [fleets.ids],
    );
    return {
      devices: options.devices,
      salt: options.salt,
      fleets: rows as SeededFleet[],
      ms: performance.now() - started,
    };
  } finally {
    await client.end();
  }
}
