import { isIP } from "node:net";
import { availableParallelism } from "node:os";
import { z } from "zod";

// The environment variables behind GET /config, merged into the schema below. Public client
// identifiers of third-party services are placeholders until configured: the document is public.
const placeholder = (name: string) => z.string().default(`<${name}>`);

export const catalogueConfigSchema = z.object({
  SUPPORTED_SOCIAL_PROVIDERS: z
    .string()
    .default("")
    .transform((list) =>
      list
        .split(",")
        .map((name) => name.trim())
        .filter((name) => name !== ""),
    ),
  DEVICE_URLS_BASE: z.string().default("devices.localhost"),
  GIT_SERVER_URL: z.string().default("git.localhost"),
  ADMIN_URL: z.string().default("http://127.0.0.1:3000"),
  DEBUG_ENABLED: z.stringbool().default(false),
  GA_ID: placeholder("GA_ID"),
  GA_SITE: z.string().default("localhost"),
  MIXPANEL_TOKEN: placeholder("MIXPANEL_TOKEN"),
  INTERCOM_APP_ID: placeholder("INTERCOM_APP_ID"),
  RECURLY_PUBLIC_KEY: placeholder("PUBLIC_KEY"),
  PUBNUB_SUBSCRIBE_KEY: placeholder("SUBSCRIBE_KEY"),
  PUBNUB_PUBLISH_KEY: placeholder("PUBLISH_KEY"),
});

export type CatalogueConfig = z.infer<typeof catalogueConfigSchema>;

// The longest delay Node's timers take: a longer one fires after 1 ms instead.
export const MAX_TIMER_MS = 2 ** 31 - 1;
const DAY_SECONDS = 24 * 60 * 60;
const YEAR_SECONDS = 365 * DAY_SECONDS;

/**
 * A duration in whole `unit`s between `min` and `max`: every duration is bounded, so none can
 * overflow a timer or a database setting, and the error names the variable and the range.
 */
function duration(unit: "seconds" | "milliseconds", min: number, max: number, fallback: number) {
  const range = `must be a whole number of ${unit} from ${min} to ${max}`;
  return z.coerce
    .number({ error: range })
    .int({ error: range })
    .min(min, { error: range })
    .max(max, { error: range })
    .default(fallback);
}

/** fastify's `trustProxy`: whether, or through how many proxies or which ones, `X-Forwarded-For` names the client. */
export type TrustProxy = boolean | number | string[];

// proxy-addr's names for ranges, besides addresses and CIDR ranges.
const namedRanges = new Set(["loopback", "linklocal", "uniquelocal"]);

function isProxyRange(entry: string): boolean {
  if (namedRanges.has(entry)) return true;
  const [address = "", prefix, ...rest] = entry.split("/");
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128));
}

const trustProxy = z
  .string()
  .default("false")
  .transform((value, context): TrustProxy => {
    if (value === "true" || value === "false") return value === "true";
    if (/^\d{1,3}$/.test(value)) return Number(value);
    const ranges = value.split(",").map((entry) => entry.trim());
    if (ranges.every(isProxyRange)) return ranges;
    context.addIssue({
      code: "custom",
      message:
        "must be true, false, a number of proxies, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal",
    });
    return z.NEVER;
  });

/** Failures a kind of key may have for free (login throttle). */
const freeFailures = (fallback: number) => z.coerce.number().int().min(0).max(1_000_000).default(fallback);

// Read and validated once at start; the README's configuration table documents each variable.
const schema = z.object({
  HOST: z.string().default("127.0.0.1"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  DATABASE_URL: z.string().url().optional(),
  // Behind a transaction pooler (README "Behind PgBouncer"): a direct connection for what needs a
  // session (the change bus's LISTEN, the job queue), and `false` so that DATABASE_URL's
  // connections carry no session state: unnamed statements, no startup options.
  DATABASE_DIRECT_URL: z.string().url().optional(),
  DATABASE_PREPARED_STATEMENTS: z
    .enum(["true", "false"])
    .default("true")
    .transform((value) => value === "true"),
  DATABASE_POOL_SIZE: z.coerce
    .number()
    .int()
    .positive()
    .default(2 * availableParallelism()),
  // Every statement has a time-out (0: none): a read, or any statement of its own, and each
  // statement of a write transaction. A caller waits this long at most for a connection.
  DATABASE_STATEMENT_TIMEOUT_MS: duration("milliseconds", 0, MAX_TIMER_MS, 5_000),
  DATABASE_WRITE_TIMEOUT_MS: duration("milliseconds", 0, MAX_TIMER_MS, 30_000),
  DATABASE_CONNECT_TIMEOUT_MS: duration("milliseconds", 1, MAX_TIMER_MS, 5_000),
  // The most pool connections subscriptions' reads hold at once, so streams cannot starve requests;
  // unset: a quarter of DATABASE_POOL_SIZE, at least 1.
  DATABASE_STREAM_CONNECTIONS: z.coerce.number().int().positive().optional(),
  // PostgreSQL streaming replicas of DATABASE_URL (comma-separated URLs) that answer read requests
  // (README "Reads on replicas"), and how far behind the primary one may be before reads leave it.
  DATABASE_REPLICA_URLS: z
    .string()
    .optional()
    .transform((list, context) => {
      const urls = (list ?? "")
        .split(",")
        .map((url) => url.trim())
        .filter((url) => url !== "");
      for (const url of urls) {
        if (!z.string().url().safeParse(url).success || !/^postgres(ql)?:$/.test(new URL(url).protocol)) {
          context.addIssue({
            code: "custom",
            message: "must be PostgreSQL URLs (postgres://…), comma-separated",
          });
          return z.NEVER;
        }
      }
      return urls;
    }),
  DATABASE_REPLICA_MAX_LAG_MS: duration("milliseconds", 1, MAX_TIMER_MS, 1_000),
  DATA_DIR: z.string().default("./data"),
  ADMIN_USERNAME: z.string().min(1).default("admin"),
  ADMIN_PASSWORD: z.string().min(8).optional(),
  JWT_SECRET: z.string().min(32).optional(),
  // POST /login_'s throttle (README "Authentication and permissions"): failures free per (username,
  // address) pair, per address and per username, and the seconds each kind takes to drain one; the
  // wait after the first failure beyond an allowance (doubled after each further one) and the
  // longest (seconds); how many keys of each kind it holds.
  LOGIN_THROTTLE_PAIR_FREE: freeFailures(5),
  LOGIN_THROTTLE_PAIR_DRAIN: duration("seconds", 1, DAY_SECONDS, 300),
  LOGIN_THROTTLE_ADDRESS_FREE: freeFailures(30),
  LOGIN_THROTTLE_ADDRESS_DRAIN: duration("seconds", 1, DAY_SECONDS, 60),
  LOGIN_THROTTLE_USERNAME_FREE: freeFailures(200),
  LOGIN_THROTTLE_USERNAME_DRAIN: duration("seconds", 1, DAY_SECONDS, 30),
  LOGIN_THROTTLE_BASE_DELAY: duration("seconds", 1, DAY_SECONDS, 1),
  LOGIN_THROTTLE_MAX_DELAY: duration("seconds", 1, DAY_SECONDS, 900),
  LOGIN_THROTTLE_MAX_KEYS: z.coerce.number().int().min(1_000).max(10_000_000).default(100_000),
  // A device that reported once and then stays silent this long (seconds) is marked offline.
  DEVICE_OFFLINE_TIMEOUT: duration("seconds", 1, YEAR_SECONDS, 90),
  // How long a state report waits for others to be written with it (src/devices/report-batcher.ts).
  DEVICE_REPORT_WINDOW_MS: z.coerce
    .number({ error: "must be a whole number of milliseconds from 0 to 1000" })
    .int({ error: "must be a whole number of milliseconds from 0 to 1000" })
    .min(0, { error: "must be a whole number of milliseconds from 0 to 1000" })
    .max(1000, { error: "must be a whole number of milliseconds from 0 to 1000" })
    .default(2),
  SUPERVISOR_KEY_SECRET: z.string().min(32).optional(),
  // The proxy: how long one device may take, how many are called at once, which networks it may call.
  PROXY_TIMEOUT_MS: duration("milliseconds", 1, MAX_TIMER_MS, 10_000),
  PROXY_CONCURRENCY: z.coerce.number().int().min(1).max(1024).default(128),
  PROXY_ALLOWED_NETWORKS: z.string().optional(),
  // Commands as jobs (`Prefer: respond-async`, README "Commands as jobs"): whether this instance
  // runs the job queue and works its batches; devices per batch; devices of one job called at once
  // over every instance; devices this instance calls at once over every job; calls a device gets at
  // most when unreachable or silent, and the wait before the first retry (doubled after each); the
  // heartbeat of a running batch, and how often an instance looks for batches whose worker went
  // silent (both seconds: a batch of a killed instance is taken over within about their sum); how
  // often an idle worker looks for batches (seconds).
  COMMAND_JOBS: z
    .enum(["true", "false"])
    .default("true")
    .transform((value) => value === "true"),
  COMMAND_JOB_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(100),
  COMMAND_JOB_CONCURRENCY: z.coerce.number().int().min(1).max(100_000).default(200),
  COMMAND_JOB_INSTANCE_CONCURRENCY: z.coerce.number().int().min(1).max(100_000).default(400),
  COMMAND_JOB_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(3),
  COMMAND_JOB_RETRY_DELAY: duration("seconds", 1, 3600, 2),
  COMMAND_JOB_HEARTBEAT: duration("seconds", 10, 3600, 30),
  COMMAND_JOB_SUPERVISE_INTERVAL: duration("seconds", 1, 3600, 15),
  COMMAND_JOB_POLL_INTERVAL: z.coerce.number().min(0.5).max(3600).default(2),
  // OData reads: the cost limit (rows a request could produce), what a collection or expansion
  // without $top counts as, and how deeply $expand may nest. The cost limit sits between three
  // nested unbounded levels (1000³, as balena-sdk's os.getAvailableOsVersions asks: fleets, their
  // releases, the releases' tags) with their siblings, and four (1000⁴), not on three exactly.
  ODATA_MAX_COST: z.coerce.number().int().positive().default(10_000_000_000),
  ODATA_UNBOUNDED_ROWS: z.coerce.number().int().positive().default(1000),
  ODATA_MAX_EXPAND_DEPTH: z.coerce.number().int().positive().default(5),
  // $batch at /odata/$batch: the most requests one batch holds, its largest body, and what its reads
  // may cost together (each also has the limits of a request of its own): by default what one
  // request may cost, so a batch multiplies no request's share of the database.
  ODATA_BATCH_MAX_PARTS: z.coerce.number().int().positive().max(1000).default(100),
  ODATA_BATCH_MAX_COST: z.coerce.number().int().positive().default(10_000_000_000),
  ODATA_BATCH_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  // GraphQL at /graphql: the protections, and whether the schema may be explored.
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().positive().default(10),
  GRAPHQL_MAX_COST: z.coerce.number().int().positive().default(1_000_000_000),
  // The most fields a document may select, each fragment's counted wherever it is spread: what
  // validation, planning and execution take grows with it (issue 45). 2,000 keeps the bench's 300
  // aliases of five fields (W4d) and refuses a new document before it holds the event loop for long.
  GRAPHQL_MAX_FIELDS: z.coerce.number().int().positive().default(2000),
  GRAPHQL_MAX_FIRST: z.coerce.number().int().positive().default(1000),
  GRAPHQL_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(100 * 1024),
  // The root fields of a query as one SQL statement; false: one statement per root field.
  GRAPHQL_ONE_STATEMENT: z
    .enum(["true", "false"])
    .default("true")
    .transform((value) => value === "true"),
  GRAPHQL_INTROSPECTION: z
    .enum(["true", "false"])
    .default("true")
    .transform((value) => value === "true"),
  GRAPHQL_GRAPHIQL: z
    .enum(["true", "false"])
    .default("true")
    .transform((value) => value === "true"),
  // Comma-separated origins allowed to call the API from a browser; unset: any origin.
  CORS_ORIGINS: z.string().optional(),
  // Whether X-Forwarded-For names the client (README "Behind a load balancer"): false (unset), true
  // (any sender: only behind a proxy that overwrites the header), a number of proxies in front, or
  // the proxies' addresses and CIDR ranges.
  TRUST_PROXY: trustProxy,
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  // Operations (README "Operations"): a bearer token /metrics asks for when set; how long an idle
  // keep-alive connection and a request's headers may take (above a load balancer's 60 s idle
  // time-out, so the balancer, not the server, closes idle connections); on SIGTERM, how long
  // /readyz says 503 while the server still serves (SHUTDOWN_DELAY), then how long in-flight
  // requests get to finish (SHUTDOWN_GRACE), in seconds.
  METRICS_TOKEN: z.string().min(16).optional(),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: duration("milliseconds", 1, MAX_TIMER_MS, 72_000),
  HTTP_HEADERS_TIMEOUT_MS: duration("milliseconds", 1, MAX_TIMER_MS, 75_000),
  SHUTDOWN_DELAY: duration("seconds", 0, 3600, 0),
  SHUTDOWN_GRACE: duration("seconds", 1, 3600, 30),
  // How often the server gives freed memory back to the system: malloc's, and V8's free heap pages
  // after a burst (src/commands/memory-release.ts); 0: never.
  MEMORY_RELEASE_INTERVAL_MS: duration("milliseconds", 0, MAX_TIMER_MS, 5_000),
  // Response compression (gzip or br, as the client accepts) of answers of at least
  // HTTP_COMPRESSION_MIN_BYTES; false leaves it to a proxy in front.
  HTTP_COMPRESSION: z
    .enum(["true", "false"])
    .default("true")
    .transform((value) => value === "true"),
  HTTP_COMPRESSION_MIN_BYTES: z.coerce.number().int().min(0).default(1024),
  // GET /config: deployment URLs and public client identifiers.
  ...catalogueConfigSchema.shape,
});

/** Every setting; scripts/env-example.ts writes .env.example from it. */
export const configSchema = schema;

export type Config = z.infer<typeof schema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "not set", as it does for most tools.
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ""));
  const parsed = schema.safeParse(set);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`Invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  if (parsed.data.DATABASE_REPLICA_URLS.length > 0 && !parsed.data.DATABASE_URL)
    throw new Error(
      "Invalid configuration:\n  DATABASE_REPLICA_URLS: needs DATABASE_URL (replicas of the embedded database do not exist)",
    );
  return parsed.data;
}
