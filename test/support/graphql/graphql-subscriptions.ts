// A GraphQL subscription over Server-Sent Events, as a browser's fetch reads it: POST /graphql with
// `Accept: text/event-stream` on a real socket (or GET /graphql?query=…, as an EventSource would);
// each `event: next` frame is one result.

export interface Result<T> {
  readonly data?: T | null;
  readonly errors?: readonly { message: string; extensions?: { code?: string } }[];
}

export interface Subscription<T> {
  /** Every result received so far, in order. */
  readonly results: Result<T>[];
  /** Whether the server sent `event: complete`. */
  readonly completed: () => boolean;
  /** Resolves when the stream has ended, however it ended. */
  readonly finished: Promise<void>;
  /** The first result (received or to come) that `match` accepts. */
  until(match: (result: Result<T>) => boolean, what: string, timeoutMs?: number): Promise<Result<T>>;
  close(): void;
}

export async function subscribe<T = Record<string, unknown>>(
  url: string,
  token: string | undefined,
  query: string,
  variables?: Record<string, unknown>,
  method: "POST" | "GET" = "POST",
): Promise<Subscription<T>> {
  const aborter = new AbortController();
  const headers = { accept: "text/event-stream", ...(token ? { authorization: `Bearer ${token}` } : {}) };
  const response =
    method === "POST"
      ? await fetch(`${url}/graphql`, {
          method,
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
          signal: aborter.signal,
        })
      : await fetch(
          `${url}/graphql?${new URLSearchParams({ query, ...(variables ? { variables: JSON.stringify(variables) } : {}) })}`,
          { headers, signal: aborter.signal },
        );
  if (!response.ok || !response.body)
    throw new Error(`subscription: HTTP ${response.status} ${await response.text()}`);
  const results: Result<T>[] = [];
  const waiters = new Set<() => void>();
  let completed = false;
  let ended = false;
  const notify = () => {
    for (const waiter of waiters) waiter();
  };
  const finished = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = frame.split("\n");
          const event = lines
            .find((line) => line.startsWith("event:"))
            ?.slice(6)
            .trim();
          const data = lines
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).trim())
            .join("\n");
          if (event === "next") results.push(JSON.parse(data) as Result<T>);
          if (event === "complete") completed = true;
          notify();
        }
      }
    } catch {
      // Closed by us (abort) or by the server.
    } finally {
      ended = true;
      notify();
    }
  })();
  return {
    results,
    completed: () => completed,
    finished,
    until(match, what, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = results.find(match);
          if (found) {
            cleanup();
            resolve(found);
          } else if (ended) {
            cleanup();
            reject(new Error(`stream ended before ${what}; got ${JSON.stringify(results)}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no ${what} within ${timeoutMs} ms; got ${JSON.stringify(results.slice(-5))}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close: () => aborter.abort(),
  };
}
