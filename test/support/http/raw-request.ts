import { request } from "node:http";

export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The body as it came over the wire: compressed when the answer says so. */
  readonly body: Buffer;
}

/** A request over node:http, which (unlike fetch) neither asks for nor undoes a compression. */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const sent = request(
      url,
      { method: options.method ?? "GET", headers: options.headers ?? {} },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks),
          }),
        );
        response.on("error", reject);
      },
    );
    sent.on("error", reject);
    sent.end(options.body);
  });
}
