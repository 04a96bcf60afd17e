import { setImmediate as setImmediatePromise } from "node:timers/promises";
import { clientErrorOf } from "../../core/client-errors.ts";
import { type CostBudget, defaultReadLimits } from "../../core/limits.ts";
import { BadRequest, Unauthorized } from "../../errors.ts";
import { STANDARD_ROOT } from "../negotiation.ts";
import { type ReadContext, read } from "../read.ts";
import { type VersionedWriteContext, write } from "../write.ts";

// One request of a $batch (OData v4.01 Protocol §11.7), run as the same request on its own would
// run: the read or write core, with the caller's permissions and read limits, so a part can do and
// see no more than its caller. Its answer is a status, headers and a body; an error goes through the
// one error table (core/client-errors.ts), so no database text and nothing of rows the caller cannot
// read reaches the batch's answer.

export interface BatchPart {
  readonly method: string;
  /** The part's URL: relative to the service root (`device(1)`), or its absolute path or URL. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: unknown;
}

export interface PartAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** JSON text, or plain text (a raw value or a count), or "" for no content. */
  readonly body: string;
  /** The table a write changed (cached credentials are forgotten after it). */
  readonly table?: string;
}

export type PartContext = ReadContext &
  VersionedWriteContext & {
    readonly origin?: string;
    /** What the batch's reads may still cost (ODATA_BATCH_MAX_COST); writes are not charged. */
    readonly budget?: CostBudget;
  };

const methods = new Set(["GET", "POST", "PATCH", "PUT", "DELETE"]);

/** The part's URL after the service root: `/device(1)?…`. Another root is refused. */
export function partUrl(url: string): string {
  const path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]+/i, "");
  if (path.startsWith(`/${STANDARD_ROOT}/`)) return path.slice(STANDARD_ROOT.length + 1);
  if (path.startsWith("/") || path.startsWith("$")) {
    throw new BadRequest(`A part's URL must be under /${STANDARD_ROOT}/ or relative to it: ${url}`);
  }
  return `/${path}`;
}

/** The id of the earlier request a part's URL begins with (`$1/device_tag`: "1"), if any. */
export function referenceOf(url: string): string | undefined {
  return /^\$([^/?]+)/.exec(url)?.[1];
}

/**
 * `$1/device_tag` → the URL of what request 1 created (its Location), then `/device_tag`
 * (OData v4.01 Protocol §11.7.6). `created` holds the locations of the requests it may name.
 */
export function withReference<P extends BatchPart>(part: P, created: ReadonlyMap<string, string>): P {
  const reference = referenceOf(part.url);
  if (reference === undefined) return part;
  const location = created.get(reference);
  if (location === undefined) throw new BadRequest(`'$${reference}': that request created no entity`);
  return { ...part, url: `${location}${part.url.slice(reference.length + 1)}` };
}

/** Runs one part; a client error is its answer, anything else is a 500 with no detail. */
export async function runPart(part: BatchPart, context: PartContext): Promise<PartAnswer> {
  return answerPart(part, context).catch((error: unknown) => errorAnswer(error));
}

/** Runs one part, throwing its error: a change set rolls back on it. */
export async function answerPart(part: BatchPart, context: PartContext): Promise<PartAnswer> {
  // A turn of the event loop between parts: parts answered without a statement (refused, or from
  // memory) settle in microtasks alone, and a batch of 100 of them would hold the loop as one
  // block (100 reads on the embedded database, when it ran on this thread: 1.75 s under load,
  // test/odata/hostile-urls.test.ts).
  await setImmediatePromise();
  const method = part.method.toUpperCase();
  if (!methods.has(method)) throw new BadRequest(`A part's method must be one of ${[...methods].join(", ")}`);
  const url = partUrl(part.url);
  const header = (name: string) => part.headers[name];
  if (method === "GET") {
    const reply = await read(
      {
        version: STANDARD_ROOT,
        url,
        headers: {
          accept: header("accept"),
          prefer: header("prefer"),
          "if-none-match": header("if-none-match"),
        },
        ...(context.origin ? { origin: context.origin } : {}),
      },
      context.budget
        ? { ...context, limits: { ...(context.limits ?? defaultReadLimits), budget: context.budget } }
        : context,
    );
    const status = reply.status ?? 200;
    const headers =
      status === 204 || status === 304
        ? reply.headers
        : { ...reply.headers, "content-type": reply.contentType };
    return { status, headers, body: reply.body };
  }
  if (context.actor === undefined) throw new Unauthorized();
  const reply = await write(
    {
      method,
      version: STANDARD_ROOT,
      url,
      body: part.body,
      dryRun: false,
      v4: true,
      prefer: header("prefer"),
      ifMatch: header("if-match"),
      ifNoneMatch: header("if-none-match"),
    },
    context,
  );
  return { status: reply.status, headers: reply.headers, body: reply.body, table: reply.table };
}

/** A part's error as a v4 error object, from the one error table. */
export function errorAnswer(error: unknown): PartAnswer {
  const known = clientErrorOf(error);
  const status = known?.status ?? 500;
  const code = known?.code ?? "INTERNAL_SERVER_ERROR";
  const message = known?.message ?? "Internal server error";
  return {
    status,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ error: { code, message } }),
  };
}
