import { availableParallelism } from "node:os";
import { z } from "zod";
import { catalogueConfigSchema } from "./catalogue/config.ts";

// Read and validated once at start; the README's configuration table documents each variable.
const schema = z.object({
  HOST: z.string().default("127.0.0.1"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  DATABASE_URL: z.string().url().optional(),
  DATABASE_POOL_SIZE: z.coerce
    .number()
    .int()
    .positive()
    .default(2 * availableParallelism()),
  DATA_DIR: z.string().default("./data"),
  ADMIN_USERNAME: z.string().min(1).default("admin"),
  ADMIN_PASSWORD: z.string().min(8).optional(),
  JWT_SECRET: z.string().min(32).optional(),
  // A device that reported once and then stays silent this long (seconds) is marked offline.
  DEVICE_OFFLINE_TIMEOUT: z.coerce.number().int().positive().default(90),
  SUPERVISOR_KEY_SECRET: z.string().min(32).optional(),
  // The proxy: how long one device may take, how many are called at once, which networks it may call.
  PROXY_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  PROXY_CONCURRENCY: z.coerce.number().int().min(1).max(1024).default(128),
  PROXY_ALLOWED_NETWORKS: z.string().optional(),
  // GraphQL at /graphql: the protections, and whether the schema may be explored.
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().positive().default(10),
  GRAPHQL_MAX_COST: z.coerce.number().int().positive().default(1_000_000_000),
  GRAPHQL_MAX_FIRST: z.coerce.number().int().positive().default(1000),
  GRAPHQL_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(100 * 1024),
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
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  // GET /config: deployment URLs and public client identifiers.
  ...catalogueConfigSchema.shape,
});

export type Config = z.infer<typeof schema>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "not set", as it does for most tools.
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ""));
  const parsed = schema.safeParse(set);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`Invalid configuration:\n  ${problems.join("\n  ")}`);
  }
  return parsed.data;
}
