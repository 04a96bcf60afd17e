import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

// What a device keeps across restarts, in <data-dir>/supervisor.json. The application's
// own files (its data folder, the update lock) live beside it in the same directory.

const proxySchema = z.object({
  type: z.enum(["socks4", "socks5", "http-connect", "http-relay"]),
  ip: z.string(),
  port: z.number().int(),
  login: z.string().optional(),
  password: z.string().optional(),
  noProxy: z.array(z.string()).readonly().optional(),
  dns: z.union([z.string(), z.boolean()]).optional(),
});

const persistedSchema = z.object({
  uuid: z.string(),
  apiKey: z.string(),
  commit: z.string().nullable(),
  /** The application's container; a restart of the supervisor does not recreate it. */
  containerId: z.string().optional(),
  containerCreatedAt: z.string().optional(),
  hostConfig: z.object({ network: z.object({ hostname: z.string(), proxy: proxySchema.optional() }) }),
  /** Set once a managed device has registered with its cloud. */
  cloud: z
    .object({ api: z.string(), fleet: z.number().int(), deviceId: z.number().int(), deviceKey: z.string() })
    .optional(),
});

export type Persisted = z.infer<typeof persistedSchema>;

const STATE_FILE = "supervisor.json";

export function loadPersisted(dataDir: string): Persisted | undefined {
  let text: string;
  try {
    text = readFileSync(join(dataDir, STATE_FILE), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const parsed = persistedSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${join(dataDir, STATE_FILE)} is damaged: ${parsed.error.message}`);
  return parsed.data;
}

export function savePersisted(dataDir: string, state: Persisted): void {
  mkdirSync(dataDir, { recursive: true });
  // Write then rename: a crash mid-write never leaves half a file behind.
  const file = join(dataDir, STATE_FILE);
  // It holds the device's keys (and a proxy password): for its owner's eyes only.
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}
