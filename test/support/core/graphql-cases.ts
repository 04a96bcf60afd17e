import type { CaseRequest, CaseServer } from "./sql-cases.ts";

// The GraphQL cases and the GraphQL requests of the write cases (test/core/cases/README.md): the
// format of a .graphql case file, the request it makes, and its answer laid out for a diff.

/**
 * What answered an operation: the one statement (src/graphql/execution/answer.ts), the resolvers, or neither
 * (`none`: refused before it ran, as an invalid document is; fleetgate_graphql_operations_total
 * does not count it).
 */
export type AnsweredBy = "database" | "executor" | "none";
const answeredByValues: readonly string[] = ["database", "executor", "none"];

export interface GraphQLCase {
  /** `## as: <caller>`: a caller of the fixture, as `Authorization: as <caller>` of a .http case. */
  readonly caller: string;
  /** `## variables: {…}`, one line of JSON. */
  readonly variables: Record<string, unknown> | undefined;
  /** `## operation name: <name>`: which operation of the document runs. */
  readonly operationName: string | undefined;
  /** `## answered by: database|executor|none`; required of a GraphQL read case. */
  readonly answeredBy: AnsweredBy | undefined;
  /** `## status: N`, 200 when absent. */
  readonly status: number;
  /** `## after: GET <url>`: the read that shows the rows after a write (write cases only). */
  readonly after: string | undefined;
  /** The document: every line that is not a `#` line. */
  readonly operation: string;
}

/** `## name: value` lines of a case file, by name; other `#` lines are comments. */
export function directivesOf(text: string): Map<string, string> {
  const directives = new Map<string, string>();
  for (const line of text.split("\n").map((l) => l.trim())) {
    const directive = /^## ([a-z ]+): (.*)$/.exec(line);
    if (directive) directives.set(directive[1] as string, (directive[2] as string).trim());
  }
  return directives;
}

const known = new Set(["as", "variables", "operation name", "answered by", "status", "after"]);

export function parseGraphQLCase(text: string): GraphQLCase {
  const directives = directivesOf(text);
  for (const name of directives.keys())
    if (!known.has(name)) throw new Error(`unknown directive ## ${name}:`);
  const answeredBy = directives.get("answered by");
  if (answeredBy !== undefined && !answeredByValues.includes(answeredBy))
    throw new Error(`## answered by: database, executor or none, not ${answeredBy}`);
  const variables = directives.get("variables");
  const operation = text
    .split("\n")
    .filter((line) => !line.trim().startsWith("#"))
    .join("\n")
    .trim();
  if (!operation) throw new Error("a .graphql case needs an operation");
  return {
    caller: directives.get("as") ?? "admin",
    variables: variables === undefined ? undefined : (JSON.parse(variables) as Record<string, unknown>),
    operationName: directives.get("operation name"),
    answeredBy: answeredBy as AnsweredBy | undefined,
    status: Number(directives.get("status") ?? 200),
    after: directives.get("after"),
    operation,
  };
}

/** The case as the request the case server sends: a POST of `{query, variables}` to /graphql. */
export function graphqlRequest(c: GraphQLCase): CaseRequest {
  return {
    method: "POST",
    url: "/graphql",
    status: c.status,
    headers: { authorization: `as ${c.caller}` },
    body: JSON.stringify({
      query: c.operation,
      ...(c.variables ? { variables: c.variables } : {}),
      ...(c.operationName ? { operationName: c.operationName } : {}),
    }),
  };
}

/**
 * A GraphQL answer as a .json file: indented, with each error's `requestId` (new on every request)
 * left out. Everything else (data, each error's message, path, locations and code) is compared.
 */
export function formatGraphQLBody(body: string): string {
  const answer = JSON.parse(body) as { errors?: { extensions?: Record<string, unknown> }[] };
  for (const error of answer.errors ?? []) {
    if (error.extensions) {
      const { requestId: _requestId, ...extensions } = error.extensions;
      error.extensions = extensions;
    }
  }
  return `${JSON.stringify(answer, null, 2)}\n`;
}

/** The GraphQL operations the server ran so far, by what answered them (from /metrics). */
export async function operationsAnswered(
  server: CaseServer,
): Promise<Record<Exclude<AnsweredBy, "none">, number>> {
  const { body } = await server.send({
    method: "GET",
    url: "/metrics",
    status: 200,
    headers: { authorization: "as anonymous" },
  });
  const count = (by: string) => {
    const found = new RegExp(`^fleetgate_graphql_operations_total\\{answered_by="${by}"\\} (\\d+)`, "m").exec(
      body,
    );
    if (!found) throw new Error(`no fleetgate_graphql_operations_total{answered_by="${by}"} in /metrics`);
    return Number(found[1]);
  };
  return { database: count("database"), executor: count("executor") };
}
