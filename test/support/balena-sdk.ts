import { type BalenaSDK, getSdk } from "balena-sdk";

// balena-sdk as a test drives it: its token kept in memory, every request logged with the
// server's answer, so a failing call can report the exact requests it sent.

export interface Exchange {
  readonly request: string;
  response?: string;
}

const clip = (text: string, max = 600) => (text.length > max ? `${text.slice(0, max)}…` : text);

const describeBody = (body: unknown): string =>
  body === undefined || body === null || body === ""
    ? ""
    : clip(typeof body === "string" ? body : JSON.stringify(body));

/** An SDK on `apiUrl` that keeps its token in memory (never ~/.balena) and logs its requests. */
export function loggedSdk(apiUrl: string): { sdk: BalenaSDK; log: Exchange[] } {
  const sdk = getSdk({ apiUrl, dataDirectory: false, isBrowser: false, retryRateLimitedRequests: false });
  const log: Exchange[] = [];
  const pending: Exchange[] = [];
  type Options = { method?: string; url?: string; baseUrl?: string; body?: unknown };
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
