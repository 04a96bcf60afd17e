import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";
import type { Database } from "../../db/database.ts";
import { withinTransaction } from "../../db/within-transaction.ts";
import { BadRequest } from "../../errors.ts";
import type { BatchLimits } from "./json-batch.ts";
import {
  type MimePart,
  mediaType,
  mixedBoundary,
  parseHeaderLines,
  parseMultipart,
  serializeMultipart,
  splitHeaders,
} from "./multipart.ts";
import {
  answerPart,
  type BatchPart,
  errorAnswer,
  type PartAnswer,
  type PartContext,
  referenceOf,
  runPart,
  withReference,
} from "./part.ts";

// OData 4.0 Protocol §11.7 (multipart batch): a multipart/mixed body whose parts are single requests
// (`Content-Type: application/http`, `Content-Transfer-Encoding: binary`, an HTTP request line,
// headers and a JSON body) or change sets (a nested multipart/mixed of such requests). The answer is
// a multipart/mixed of responses in the same order. The requests run as the JSON batch's do
// (./part.ts): a change set is one transaction through the write core; if one of its requests fails
// the change set is rolled back and answered with that request's error alone (§11.7.4). Within a
// change set a request's URL may begin with `$<Content-ID>` of an earlier request of it: the entity
// that request created (its Location).

export interface MultipartRequest extends BatchPart {
  readonly contentId?: string;
}

export type BatchItem =
  | { readonly kind: "request"; readonly request: MultipartRequest }
  | { readonly kind: "changeSet"; readonly requests: readonly MultipartRequest[] };

/** The batch's requests and change sets, checked whole before any runs: a malformed batch runs nothing. */
export function parseMultipartBatch(body: string, contentType: string, limits: BatchLimits): BatchItem[] {
  const boundary = mixedBoundary(contentType, "The batch") as string;
  const contentIds = new Set<string>();
  let count = 0;
  const items = parseMultipart(body, boundary, "The batch").map((part, i): BatchItem => {
    const where = `Batch part ${i + 1}`;
    const changeSet = mixedBoundary(part.headers["content-type"], where);
    if (changeSet === undefined) {
      count++;
      return { kind: "request", request: httpRequest(part, where, contentIds) };
    }
    const inSet = new Set<string>();
    const requests = parseMultipart(part.content, changeSet, `${where} (a change set)`).map((inner, j) => {
      const request = httpRequest(inner, `${where}, change set request ${j + 1}`, contentIds, inSet);
      if (request.method === "GET")
        throw new BadRequest(
          `${where}, change set request ${j + 1}: a change set holds no GET (OData 4.0 §11.7.2)`,
        );
      return request;
    });
    count += requests.length;
    return { kind: "changeSet", requests };
  });
  if (count > limits.maxParts) {
    throw new BadRequest(
      `A batch may hold at most ${limits.maxParts} requests (ODATA_BATCH_MAX_PARTS); this one holds ${count}`,
    );
  }
  return items;
}

/**
 * One `application/http` part: `METHOD url HTTP/1.1`, headers, and a JSON body or none. `inSet`,
 * inside a change set, holds the Content-IDs its `$<id>` references may name.
 */
function httpRequest(
  part: MimePart,
  where: string,
  contentIds: Set<string>,
  inSet?: Set<string>,
): MultipartRequest {
  if (mediaType(part.headers["content-type"])?.type !== "application/http")
    throw new BadRequest(`${where}: its Content-Type must be application/http or multipart/mixed`);
  if (part.headers["content-transfer-encoding"]?.toLowerCase() !== "binary")
    throw new BadRequest(`${where}: its Content-Transfer-Encoding must be binary (OData 4.0 §11.7.2)`);
  const contentId = part.headers["content-id"];
  if (contentId !== undefined) {
    if (contentId === "" || contentIds.has(contentId))
      throw new BadRequest(`${where}: its Content-ID '${contentId}' is empty or not unique in the batch`);
    contentIds.add(contentId);
  }
  const { lines, content } = splitHeaders(part.content, where);
  const [requestLine, ...headerLines] = lines;
  const line = /^([A-Z]+) (\S+) HTTP\/1\.1$/.exec(requestLine ?? "");
  if (!line)
    throw new BadRequest(`${where}: '${requestLine ?? ""}' is not a request line 'METHOD url HTTP/1.1'`);
  const [, method = "", url = ""] = line;
  const reference = referenceOf(url);
  if (reference !== undefined && !inSet?.has(reference))
    throw new BadRequest(`${where}: '$${reference}' names no earlier request of its change set`);
  const headers = parseHeaderLines(headerLines, where);
  const text = content.trim();
  let body: unknown;
  if (text !== "") {
    if (mediaType(headers["content-type"])?.type !== "application/json")
      throw new BadRequest(`${where}: a request's body must be application/json`);
    try {
      body = JSON.parse(text);
    } catch {
      throw new BadRequest(`${where}: its body is not JSON`);
    }
  }
  if (contentId !== undefined) inSet?.add(contentId);
  return {
    method,
    url,
    headers,
    ...(body === undefined ? {} : { body }),
    ...(contentId === undefined ? {} : { contentId }),
  };
}

/** Runs the batch's items in order, each change set in one transaction; the answer's parts. */
export async function runMultipartBatch(
  items: readonly BatchItem[],
  db: Database,
  context: PartContext,
): Promise<{ boundary: string; body: string; tables: string[] }> {
  const tables: string[] = [];
  const parts: string[] = [];
  for (const item of items) {
    if (item.kind === "request") {
      const answer = await runPart(item.request, context);
      if (answer.status < 400 && answer.table) tables.push(answer.table);
      parts.push(httpResponse(answer, item.request.contentId));
      continue;
    }
    const answers: { request: MultipartRequest; answer: PartAnswer }[] = [];
    try {
      await db.transaction(async (tx) => {
        const within = { ...context, db: withinTransaction(db, tx) };
        const created = new Map<string, string>();
        for (const request of item.requests) {
          answers.push({ request, answer: await answerPart(withReference(request, created), within) });
          const location = answers.at(-1)?.answer.headers.location;
          if (request.contentId !== undefined && location) created.set(request.contentId, location);
        }
      });
    } catch (error) {
      // §11.7.4: a change set that failed is answered with one response, the failed request's.
      parts.push(httpResponse(errorAnswer(error), item.requests[answers.length]?.contentId));
      continue;
    }
    for (const { answer } of answers) if (answer.table) tables.push(answer.table);
    const boundary = `changesetresponse_${randomUUID()}`;
    const responses = answers.map(({ request, answer }) => httpResponse(answer, request.contentId));
    parts.push(
      `Content-Type: multipart/mixed; boundary=${boundary}\r\n\r\n${serializeMultipart(boundary, responses)}`,
    );
  }
  const boundary = `batchresponse_${randomUUID()}`;
  return { boundary, body: serializeMultipart(boundary, parts), tables };
}

/** One response part: its MIME headers, then the HTTP status line, headers and body. */
function httpResponse(answer: PartAnswer, contentId: string | undefined): string {
  const head = [
    "Content-Type: application/http",
    "Content-Transfer-Encoding: binary",
    ...(contentId === undefined ? [] : [`Content-ID: ${contentId}`]),
  ];
  const headers = Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}`);
  const status = `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ""}`.trimEnd();
  return `${head.join("\r\n")}\r\n\r\n${[status, ...headers].join("\r\n")}\r\n\r\n${answer.body}`;
}
