import type { Database } from "../../db/database.ts";
import { withinTransaction } from "../../db/within-transaction.ts";
import { BadRequest, FleetgateError } from "../../errors.ts";
import {
  answerPart,
  type BatchPart,
  errorAnswer,
  type PartAnswer,
  type PartContext,
  referenceOf,
  withReference,
} from "./part.ts";

// OData JSON Format v4.01 §19 (JSON batch): `{"requests": [{id, method, url, headers, body,
// atomicityGroup, dependsOn}]}` answered with `{"responses": [{id, status, headers, body}]}` in
// the order of the requests. They run one after the other; the requests of one atomicity group run
// in ONE transaction through the write core, and if one fails the group is rolled back: the one that
// failed answers its error, the others of the group 424. A request that depends on one that failed
// (or on a failed group) is not run and answers 424. A request's URL may begin with `$<id>` of an
// earlier request of its atomicity group, or of one it depends on (§19.1): the entity that request
// created (its Location).

export interface BatchLimits {
  /** The most requests one batch may hold (ODATA_BATCH_MAX_PARTS). */
  readonly maxParts: number;
}

interface JsonRequest extends BatchPart {
  readonly id: string;
  readonly atomicityGroup?: string;
  readonly dependsOn: readonly string[];
}

const text = (value: unknown, what: string): string => {
  if (typeof value !== "string" || value === "") throw new BadRequest(`${what} must be a non-empty string`);
  return value;
};

function headersOf(value: unknown, where: string): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new BadRequest(`${where}.headers must be an object of header names and values`);
  return Object.fromEntries(
    Object.entries(value).map(([name, header]) => [
      name.toLowerCase(),
      text(header, `${where}.headers.${name}`),
    ]),
  );
}

/** The batch's requests, checked whole before any runs: a malformed batch runs nothing. */
export function parseJsonBatch(body: unknown, limits: BatchLimits): JsonRequest[] {
  const requests = (body as { requests?: unknown } | null)?.requests;
  if (!Array.isArray(requests)) throw new BadRequest('A JSON batch is {"requests": [...]}');
  if (requests.length > limits.maxParts) {
    throw new BadRequest(
      `A batch may hold at most ${limits.maxParts} requests (ODATA_BATCH_MAX_PARTS); this one holds ${requests.length}`,
    );
  }
  const seen = new Set<string>();
  const groups = new Set<string>();
  /** Each earlier request's atomicity group. */
  const groupOf = new Map<string, string>();
  let open: string | undefined;
  return requests.map((request: unknown, index): JsonRequest => {
    const where = `requests[${index}]`;
    if (typeof request !== "object" || request === null) throw new BadRequest(`${where} must be an object`);
    const r = request as Record<string, unknown>;
    const id = text(r.id, `${where}.id`);
    if (seen.has(id) || groups.has(id))
      throw new BadRequest(`${where}.id '${id}' is not unique in the batch`);
    const group =
      r.atomicityGroup === undefined ? undefined : text(r.atomicityGroup, `${where}.atomicityGroup`);
    // §19.1: the requests of one atomicity group are adjacent.
    if (group !== undefined && group !== open && groups.has(group))
      throw new BadRequest(`${where}: the requests of atomicity group '${group}' must be adjacent`);
    if (group !== undefined && seen.has(group))
      throw new BadRequest(`${where}.atomicityGroup '${group}' is a request's id`);
    const dependsOn = r.dependsOn === undefined ? [] : r.dependsOn;
    if (!Array.isArray(dependsOn)) throw new BadRequest(`${where}.dependsOn must be a list of ids`);
    for (const other of dependsOn) {
      if (!seen.has(other) && !(groups.has(other) && other !== group))
        throw new BadRequest(
          `${where}.dependsOn names '${String(other)}', which is no earlier request or group`,
        );
    }
    const url = text(r.url, `${where}.url`);
    const reference = referenceOf(url);
    const inGroup = group !== undefined && groupOf.get(reference ?? "") === group;
    if (reference !== undefined && !dependsOn.includes(reference) && !inGroup)
      throw new BadRequest(
        `${where}.url: '$${reference}' names no earlier request of its atomicity group nor one it depends on`,
      );
    seen.add(id);
    if (group !== undefined) {
      groups.add(group);
      groupOf.set(id, group);
    }
    open = group;
    return {
      id,
      method: text(r.method, `${where}.method`),
      url,
      headers: headersOf(r.headers, where),
      ...(r.body === undefined ? {} : { body: r.body }),
      ...(group === undefined ? {} : { atomicityGroup: group }),
      dependsOn: dependsOn as string[],
    };
  });
}

export interface JsonResponse {
  readonly id: string;
  readonly atomicityGroup?: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: unknown;
}

const failedDependency = (what: string): PartAnswer =>
  errorAnswer(new FleetgateError(what, 424, "FAILED_DEPENDENCY"));

/** Runs the batch's requests in order, each group in one transaction. */
export async function runJsonBatch(
  requests: readonly JsonRequest[],
  db: Database,
  context: PartContext,
): Promise<{ responses: JsonResponse[]; tables: string[] }> {
  const failed = new Set<string>();
  /** The Location of each entity an earlier request created, by the request's id. */
  const created = new Map<string, string>();
  const responses: JsonResponse[] = [];
  const tables: string[] = [];
  for (let start = 0; start < requests.length; ) {
    const first = requests[start] as JsonRequest;
    let end = start + 1;
    while (first.atomicityGroup !== undefined && requests[end]?.atomicityGroup === first.atomicityGroup)
      end++;
    const unit = requests.slice(start, end);
    const answers = await runUnit(unit, db, context, failed, created);
    unit.forEach((request, i) => {
      const answer = answers[i] as PartAnswer;
      responses.push(jsonResponse(request, answer));
      if (answer.status >= 400) {
        failed.add(request.id);
        if (request.atomicityGroup !== undefined) failed.add(request.atomicityGroup);
      } else {
        if (answer.table) tables.push(answer.table);
        if (answer.headers.location) created.set(request.id, answer.headers.location);
      }
    });
    start = end;
  }
  return { responses, tables };
}

async function runUnit(
  unit: readonly JsonRequest[],
  db: Database,
  context: PartContext,
  failed: ReadonlySet<string>,
  created: ReadonlyMap<string, string>,
): Promise<PartAnswer[]> {
  const blocked = unit.find((request) => request.dependsOn.some((id) => failed.has(id)));
  if (blocked) return unit.map(() => failedDependency(`A request it depends on failed`));
  if (unit.length === 1 && unit[0]?.atomicityGroup === undefined) {
    try {
      return [await answerPart(withReference(unit[0], created), context)];
    } catch (error) {
      return [errorAnswer(error)];
    }
  }
  const answers: PartAnswer[] = [];
  try {
    await db.transaction(async (tx) => {
      const within = { ...context, db: withinTransaction(db, tx) };
      // What the group creates, nameable by its later requests (committed only with the group).
      const inGroup = new Map(created);
      for (const request of unit) {
        answers.push(await answerPart(withReference(request, inGroup), within));
        const location = answers.at(-1)?.headers.location;
        if (location) inGroup.set(request.id, location);
      }
    });
    return answers;
  } catch (error) {
    // The group rolled back: the request that failed answers its error, every other one 424.
    return unit.map((_request, i) =>
      i === answers.length
        ? errorAnswer(error)
        : failedDependency("Its atomicity group failed and was rolled back"),
    );
  }
}

function jsonResponse(request: JsonRequest, answer: PartAnswer): JsonResponse {
  const json = (answer.headers["content-type"] ?? "").startsWith("application/json");
  const body = answer.body === "" ? undefined : json ? (JSON.parse(answer.body) as unknown) : answer.body;
  const { "content-type": _type, ...headers } = answer.headers;
  return {
    id: request.id,
    ...(request.atomicityGroup === undefined ? {} : { atomicityGroup: request.atomicityGroup }),
    status: answer.status,
    headers: answer.headers["content-type"]
      ? { "content-type": answer.headers["content-type"], ...headers }
      : headers,
    ...(body === undefined ? {} : { body }),
  };
}
