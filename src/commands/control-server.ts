import { chmodSync, rmSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import type { Logger } from "pino";
import type { Database } from "../db/database.ts";
import type { Model } from "../model/types.ts";
import {
  type CommandReply,
  commandRequest,
  controlSocketPath,
  encode,
  lineReader,
  maxRequestBytes,
} from "./control-protocol.ts";
import { execute } from "./database-work.ts";

export interface CommandListener {
  /** Stops taking commands, waits for the one running, and removes the socket. */
  close(): Promise<void>;
}

/**
 * Takes the database commands of `fleetgate seed`, `user add`, … on a Unix socket in `dataDir` and
 * runs them on `db`, this process's own handle: PGlite is one session, and only its owner can keep
 * a command's transaction from mixing with the requests' statements. The caller must hold the
 * directory's lock, so a socket file already there was left by a process that died.
 */
export async function listenForCommands(
  dataDir: string,
  db: Database,
  model: Model,
  logger: Logger,
): Promise<CommandListener> {
  const { path, tooLong } = controlSocketPath(dataDir);
  if (tooLong) {
    logger.warn(
      { path },
      "commands cannot reach this server: the data directory's path is too long for a socket",
    );
    return { close: async () => {} };
  }
  rmSync(path, { force: true });
  // One command at a time, as without a server, where the directory lock allows one process.
  let queue: Promise<void> = Promise.resolve();
  // Connections that have not sent their command yet: on shutdown nothing will come of them.
  const idle = new Set<Socket>();
  const server = createServer((socket) => {
    idle.add(socket);
    socket.once("close", () => idle.delete(socket));
    socket.on("error", () => {}); // a CLI that went away: its command still runs to its end
    const take = (line: string) => {
      if (!idle.delete(socket)) return; // one command per connection
      queue = queue
        .then(() => runOne(line, socket, db, model, logger))
        .catch((error: unknown) => logger.error({ err: error }, "command not answered"));
    };
    const read = lineReader(take, maxRequestBytes);
    socket.on("data", (chunk) => {
      if (!idle.has(socket)) return;
      try {
        read(chunk);
      } catch (error) {
        idle.delete(socket);
        reply(socket, { error: (error as Error).message });
      }
    });
  });
  const listening = new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.once("listening", () => {
      server.off("error", reject);
      resolve();
    });
  });
  // Only this user may send commands (they create admins), so the socket is 0600 from its creation:
  // listen() binds before it returns, and the umask is back before any other code runs.
  const umask = process.umask(0o177);
  try {
    server.listen(path);
  } finally {
    process.umask(umask);
  }
  await listening;
  chmodSync(path, 0o600);
  return {
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await queue;
      for (const socket of idle) socket.destroy();
      await closed;
      rmSync(path, { force: true });
    },
  };
}

function reply(socket: Socket, message: CommandReply): void {
  if ("stdout" in message) socket.write(encode(message));
  else socket.end(encode(message));
}

async function runOne(
  line: string,
  socket: Socket,
  db: Database,
  model: Model,
  logger: Logger,
): Promise<void> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    parsed = undefined;
  }
  const request = commandRequest.safeParse(parsed);
  if (!request.success) {
    reply(socket, { error: "not a fleetgate command" });
    return;
  }
  const started = performance.now();
  try {
    await execute(db, model, request.data, (stdout) => reply(socket, { stdout }));
    reply(socket, { exit: 0 });
    logger.info(
      { command: request.data.command, ms: Math.round(performance.now() - started) },
      "command run",
    );
  } catch (error) {
    reply(socket, { error: (error as Error).message });
    logger.info({ command: request.data.command, error: (error as Error).message }, "command failed");
  }
}
