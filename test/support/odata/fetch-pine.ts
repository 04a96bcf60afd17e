import { type AnyObject, PinejsClientCore, StatusError } from "pinejs-client-core";

/** A pinejs error with the parsed body, as balena-request gives one: `upsert` reads `err.body`. */
export class BodyStatusError extends StatusError {
  constructor(
    message: string,
    statusCode: number,
    readonly body: unknown,
  ) {
    super(message, statusCode);
  }
}

/** pinejs-client over global fetch: the same wire encoding a browser or Node SDK produces. */
export class FetchPine extends PinejsClientCore {
  /** `Bearer <key>`, sent with every request as a logged-in SDK would. */
  authorization = "";
  readonly sent: string[] = [];

  override async _request({ method, url, body }: { method: string; url: string; body?: AnyObject }) {
    this.sent.push(`${method} ${url}${body === undefined ? "" : ` ${JSON.stringify(body)}`}`);
    const response = await fetch(url, {
      method,
      headers: {
        authorization: this.authorization,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? {} : JSON.parse(text);
    } catch {
      // a text body stays text
    }
    if (response.status >= 400)
      throw new BodyStatusError(`${response.status} ${text}`, response.status, parsed);
    return parsed as object;
  }
}
