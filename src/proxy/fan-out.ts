import { Agent, request } from "node:http";
import pLimit from "p-limit";

export interface DeviceCall {
  readonly address: string;
  readonly port: number;
  readonly apiKey: string;
  /** The supervisor path, starting with `/`. */
  readonly path: string;
  readonly data: object | undefined;
}

export interface CallOutcome {
  readonly statusCode: number;
  readonly body: unknown;
  readonly contentType: string | undefined;
  readonly error?: string;
}

export interface CallOptions {
  readonly method: string;
  readonly timeoutMs: number;
}

export interface FanOutOptions extends CallOptions {
  readonly concurrency: number;
}

// One keep-alive agent for every device the proxy calls: connections are reused between commands.
const agent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 });

// A device that cannot be reached or does not answer in time gets a status of its own, as a
// gateway would answer for it, instead of failing the whole command.
const GATEWAY_TIMEOUT = 504;
const BAD_GATEWAY = 502;
/** The device answered, but not with the JSON it said it sent. */
export const BAD_RESPONSE = "Bad API response from supervisor";

/** One call of one device's supervisor; never rejects: a failure is an outcome with an error. */
export function callSupervisor(target: DeviceCall, options: CallOptions): Promise<CallOutcome> {
  const body =
    target.data === undefined || ["GET", "HEAD"].includes(options.method)
      ? undefined
      : JSON.stringify(target.data);
  return new Promise((resolve) => {
    const outgoing = request(
      {
        agent,
        host: target.address,
        port: target.port,
        method: options.method,
        path: `${target.path}?apikey=${encodeURIComponent(target.apiKey)}`,
        headers:
          body === undefined
            ? {}
            : { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        timeout: options.timeoutMs,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const contentType = response.headers["content-type"];
          let parsed: unknown = text === "" ? null : text;
          if (contentType?.includes("json") && text !== "") {
            try {
              parsed = JSON.parse(text);
            } catch {
              resolve({
                statusCode: BAD_GATEWAY,
                body: null,
                contentType,
                error: BAD_RESPONSE,
              });
              return;
            }
          }
          resolve({ statusCode: response.statusCode ?? BAD_GATEWAY, body: parsed, contentType });
        });
        response.on("error", (error) =>
          resolve({ statusCode: BAD_GATEWAY, body: null, contentType: undefined, error: error.message }),
        );
      },
    );
    outgoing.on("timeout", () => outgoing.destroy(new Error(`No answer within ${options.timeoutMs} ms`)));
    outgoing.on("error", (error) => {
      const timedOut = error.message.startsWith("No answer within");
      resolve({
        statusCode: timedOut ? GATEWAY_TIMEOUT : BAD_GATEWAY,
        body: null,
        contentType: undefined,
        error: error.message,
      });
    });
    outgoing.end(body);
  });
}

/** Calls every target, at most `concurrency` at once; the outcomes come back in the targets' order. */
export function fanOut(targets: readonly DeviceCall[], options: FanOutOptions): Promise<CallOutcome[]> {
  return pLimit(Math.max(1, options.concurrency)).map(targets, (target) => callSupervisor(target, options));
}
