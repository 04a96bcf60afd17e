import { join, resolve } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { z } from "zod";

// The embedded database belongs to one process. While `fleetgate serve` holds DATA_DIR, the database
// commands reach it through a Unix socket in that directory and it runs them on its own handle.
// One request line from the CLI, then reply lines back; each line is one JSON value (JSON.stringify
// escapes newlines inside strings, so a line is always a whole message).

export const controlSocketName = "fleetgate.sock";

/** A Unix socket's path must fit in sun_path: 108 bytes with its NUL on Linux, 104 on macOS. */
const maxSocketPathBytes = process.platform === "linux" ? 107 : 103;

/** The socket of the server that holds `dataDir`, or why there cannot be one. */
export function controlSocketPath(dataDir: string): { path: string; tooLong: boolean } {
  const path = join(resolve(dataDir), controlSocketName);
  return { path, tooLong: Buffer.byteLength(path) > maxSocketPathBytes };
}

/** A catalogue file can be large; anything larger than this is not one. */
export const maxRequestBytes = 64 << 20;

export const commandRequest = z.discriminatedUnion("command", [
  z.object({ command: z.literal("migrate") }),
  z.object({ command: z.literal("seed") }),
  z.object({
    command: z.literal("user add"),
    user: z.object({ username: z.string(), email: z.string(), password: z.string(), admin: z.boolean() }),
  }),
  z.object({
    command: z.literal("org add"),
    organization: z.object({ handle: z.string(), name: z.string().optional(), owner: z.string().optional() }),
  }),
  // The CLI reads and parses the file: its path is the CLI's, and a bad file never reaches the server.
  z.object({ command: z.literal("catalogue import"), catalogue: z.unknown() }),
  z.object({ command: z.literal("catalogue export") }),
]);
export type CommandRequest = z.infer<typeof commandRequest>;

/** What the server sends back: the command's standard output, then how it ended. */
export type CommandReply = { stdout: string } | { exit: 0 } | { error: string };

export const encode = (message: CommandRequest | CommandReply): string => `${JSON.stringify(message)}\n`;

/** Calls `onLine` with each whole line that arrives; a line longer than `limit` is an error. */
export function lineReader(onLine: (line: string) => void, limit: number): (chunk: Buffer) => void {
  // A chunk may end inside a multi-byte character: the decoder keeps its first bytes for the next.
  const decoder = new StringDecoder("utf8");
  let pending = "";
  return (chunk) => {
    pending += decoder.write(chunk);
    for (let end = pending.indexOf("\n"); end !== -1; end = pending.indexOf("\n")) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      onLine(line);
    }
    if (pending.length > limit) throw new Error(`a message longer than ${limit} bytes`);
  };
}
