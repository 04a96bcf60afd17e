import { existsSync } from "node:fs";

/** The settings file of every command: `.env` in the directory it runs in (README, "Configuration"). */
export const envFile = ".env";

/**
 * Reads `.env` into the environment when it exists, before any command reads its configuration,
 * so `npm start`, `npx fleetgate serve` and every other command see the same settings. A variable
 * already set in the environment wins over the file's (Node's own rule for env files).
 */
export function readEnvFile(): void {
  if (existsSync(envFile)) process.loadEnvFile(envFile);
}
