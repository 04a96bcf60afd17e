import { createRequire } from "node:module";
import { type BalenaSDK, getSdk } from "balena-sdk";
import { getSdk as getLatestSdk, type BalenaSDK as LatestSDK } from "balena-sdk-latest";

// balena-sdk as a test drives it: its token kept in memory, every request logged with the
// server's answer, so a failing call can report the exact requests it sent. Two lines: 19.7.3,
// the last on /v6/ (`balena-sdk`), and the newest from the registry, on /v7/ (`balena-sdk-latest`,
// an npm alias).

export type { BalenaSDK, LatestSDK };

/** The version of the newest SDK installed under the `balena-sdk-latest` alias. */
export const latestSdkVersion: string = (
  createRequire(import.meta.url)("balena-sdk-latest/package.json") as { version: string }
).version;

export interface Exchange {
  readonly request: string;
  response?: string;
}

const clip = (text: string, max = 600) => (text.length > max ? `${text.slice(0, max)}…` : text);

const describeBody = (body: unknown): string =>
  body === undefined || body === null || body === ""
    ? ""
    : clip(typeof body === "string" ? body : JSON.stringify(body));

type Options = { method?: string; url?: string; baseUrl?: string; body?: unknown };
const sdkOptions = (apiUrl: string) => ({
  apiUrl,
  dataDirectory: false as const,
  isBrowser: false,
  retryRateLimitedRequests: false,
});

/** An SDK on `apiUrl` that keeps its token in memory (never ~/.balena) and logs its requests. */
export function loggedSdk(apiUrl: string): { sdk: BalenaSDK; log: Exchange[] };
export function loggedSdk(apiUrl: string, line: "latest"): { sdk: LatestSDK; log: Exchange[] };
export function loggedSdk(
  apiUrl: string,
  line: "19.7.3" | "latest" = "19.7.3",
): { sdk: BalenaSDK | LatestSDK; log: Exchange[] } {
  const sdk = line === "latest" ? getLatestSdk(sdkOptions(apiUrl)) : getSdk(sdkOptions(apiUrl));
  const log: Exchange[] = [];
  const pending: Exchange[] = [];
  const sent = (options: Options) => {
    const url = `${typeof options.baseUrl === "string" && !options.url?.startsWith("http") ? options.baseUrl : ""}${options.url ?? ""}`;
    const body = describeBody(options.body);
    return `${options.method ?? "GET"} ${url}${body ? ` ${body}` : ""}`;
  };
  sdk.interceptors.push({
    request(options: Options) {
      const exchange: Exchange = { request: sent(options) };
      log.push(exchange);
      pending.push(exchange);
      return options;
    },
    response(response: { statusCode?: number; status?: number; body?: unknown }) {
      const exchange = pending.shift();
      if (exchange)
        exchange.response = `${response.statusCode ?? response.status} ${describeBody(response.body)}`;
      return response;
    },
    responseError(error: { statusCode?: number; body?: unknown; message?: string }) {
      const exchange = pending.shift();
      if (exchange)
        exchange.response = `${error.statusCode ?? "no status"} ${describeBody(error.body ?? error.message)}`;
      throw error;
    },
  } as never);
  return { sdk, log };
}

/** SDK calls whose failures carry the exchanges they caused, and the requests a call sent. */
export function sdkCalls(log: readonly Exchange[]) {
  /** Runs one SDK call; on failure the error carries every request it sent and the answers. */
  async function call<T>(what: string, work: () => Promise<T>): Promise<T> {
    const from = log.length;
    try {
      return await work();
    } catch (error) {
      const exchanges = log
        .slice(from)
        .map((e) => `  ${e.request}\n    → ${e.response ?? "(no answer)"}`)
        .join("\n");
      throw new Error(`${what} failed: ${(error as Error).message}\nrequests:\n${exchanges || "  (none)"}`, {
        cause: error,
      });
    }
  }

  /** The requests a call sent (method, URL with the query decoded, body), for assertions that name them. */
  async function requestsOf(what: string, work: () => Promise<unknown>): Promise<string[]> {
    const from = log.length;
    await call(what, work);
    return log.slice(from).map((e) => e.request);
  }

  /** The error an SDK call fails with (the test fails if it succeeds), with the exchanges it caused. */
  async function failure(what: string, work: () => Promise<unknown>): Promise<Error & { code?: string }> {
    const from = log.length;
    try {
      await work();
    } catch (error) {
      return error as Error & { code?: string };
    }
    const exchanges = log.slice(from).map((e) => `  ${e.request}\n    → ${e.response ?? "(no answer)"}`);
    throw new Error(`${what} succeeded, but should have failed\nrequests:\n${exchanges.join("\n")}`);
  }

  return { call, requestsOf, failure };
}
