import { setTimeout as sleep } from "node:timers/promises";
import { loadConfig } from "../config.ts";
import type { Database } from "../db/database.ts";
import { DirectoryInUse } from "../db/directory-lock.ts";
import { openDatabase } from "../db/open.ts";
import { buildModel } from "../model/registry.ts";
import { NotServing, sendCommand } from "./control-client.ts";
import { type CommandRequest, controlSocketPath } from "./control-protocol.ts";
import { execute } from "./database-work.ts";

// How long a command waits for a data directory held by a process that takes no commands: a server
// still starting (it takes them once migrated), or another command about to finish.
const busyWaitMs = 10_000;

const writeStdout = (text: string) => {
  process.stdout.write(text);
};

/**
 * Runs a database command: on PostgreSQL, or on the embedded database when no other process holds
 * DATA_DIR, here; while `fleetgate serve` holds it, in that server, through its control socket.
 */
export async function runCommand(request: CommandRequest, write = writeStdout): Promise<void> {
  const config = loadConfig();
  const deadline = Date.now() + busyWaitMs;
  for (;;) {
    const db = await openDatabase(config).catch((error: unknown) => {
      if (error instanceof DirectoryInUse && !config.DATABASE_URL) return error;
      throw error;
    });
    if (!(db instanceof DirectoryInUse)) return executeHere(db, request, write);

    const socket = controlSocketPath(config.DATA_DIR);
    if (socket.tooLong) {
      throw new Error(
        `${db.message}, and its path is too long for the server's command socket: stop that process, or use a shorter DATA_DIR`,
      );
    }
    try {
      return await sendCommand(socket.path, request, write);
    } catch (error) {
      if (!(error instanceof NotServing)) throw error;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `${db.message}, which takes no commands (not a running \`fleetgate serve\`): wait for it to finish, or stop it`,
      );
    }
    await sleep(200);
  }
}

async function executeHere(db: Database, request: CommandRequest, write: (text: string) => void) {
  try {
    await execute(db, buildModel(), request, write);
  } finally {
    await db.close();
  }
}
