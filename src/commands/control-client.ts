import { connect } from "node:net";
import { type CommandReply, type CommandRequest, encode, lineReader } from "./control-protocol.ts";

/** Nobody takes commands on the socket: there is none, or the process that made it has died. */
export class NotServing extends Error {}

// A reply line is the output of one write; an export of a large catalogue is a few megabytes.
const maxReplyBytes = 256 << 20;

/**
 * Sends `request` to the server listening on `path` and hands its output to `write`. Resolves when
 * the command succeeded; rejects with the command's own error message when it failed.
 */
export function sendCommand(
  path: string,
  request: CommandRequest,
  write: (text: string) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let connected = false;
    let ended = false;
    const finish = (error?: Error) => {
      if (ended) return;
      ended = true;
      socket.destroy();
      if (error) reject(error);
      else resolve();
    };
    const read = lineReader((line) => {
      const reply = JSON.parse(line) as CommandReply;
      if ("stdout" in reply) write(reply.stdout);
      else if ("exit" in reply) finish();
      else finish(new Error(reply.error));
    }, maxReplyBytes);
    socket.once("connect", () => {
      connected = true;
      socket.write(encode(request));
    });
    socket.on("data", (chunk) => {
      try {
        read(chunk);
      } catch (error) {
        finish(error as Error);
      }
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      const refused = !connected && (error.code === "ENOENT" || error.code === "ECONNREFUSED");
      finish(refused ? new NotServing(error.message) : error);
    });
    socket.once("close", () =>
      finish(
        new Error("the server stopped before the command finished; it may or may not have taken effect"),
      ),
    );
  });
}
