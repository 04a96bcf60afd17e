import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { createApiKey } from "../../../src/auth/api-keys.ts";
import { loadConfig } from "../../../src/config.ts";
import type { Database, Executor, Statement } from "../../../src/db/database.ts";
import { currentUnit } from "../../../src/db/unit-of-work.ts";
import { createLogger } from "../../../src/logger.ts";
import { buildModel } from "../../../src/model/registry.ts";
import { seedDemo } from "../../../src/seed/demo.ts";
import { buildServer } from "../../../src/server.ts";
import { type DatabaseKind, freshDatabase } from "../databases.ts";

// The SQL cases (test/core/cases/README.md): the real server on a fresh database whose statements
// are recorded, the fixture they read, and the formats of the three files of a case.

export interface CaseRequest {
  readonly method: string;
  readonly url: string;
  /** `## status: N` in the .http file; 200 when absent. */
  readonly status: number;
  readonly headers: Record<string, string>;
  /** A write's body, sent as it is (JSON unless a content-type header says otherwise). */
  readonly body?: string;
}

export interface CaseReply {
  readonly status: number;
  readonly body: string;
  /** The statements the request's handler ran, in order. */
  readonly statements: Statement[];
  /** The server's own count of them (x-sql-statements). */
  readonly counted: number;
}

export interface CaseServer {
  send(request: CaseRequest): Promise<CaseReply>;
  /** The database the server runs on, unrecorded: for what a runner does between cases. */
  readonly db: Database;
  close(): Promise<void>;
}

/** Every case under `root` whose file ends in `extension`, as `<area>/<name>` without it, sorted. */
export function listCases(root: string, extension = ".http"): string[] {
  return readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(extension))
    .map((file) => relative(root, join(root, file)).slice(0, -extension.length))
    .sort();
}

/** A .http file: `# comment` and `## status: N` lines, the request line, then `Name: value` headers. */
export function parseHttp(text: string): CaseRequest {
  let status = 200;
  let requestLine: string | undefined;
  const headers: Record<string, string> = {};
  for (const line of text.split("\n").map((l) => l.trim())) {
    const expectation = /^## status: (\d+)$/.exec(line);
    if (expectation) status = Number(expectation[1]);
    else if (line === "" || line.startsWith("#")) continue;
    else if (requestLine === undefined) requestLine = line;
    else {
      const colon = line.indexOf(":");
      if (colon < 1) throw new Error(`not a header: ${line}`);
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
  }
  const space = requestLine?.indexOf(" ") ?? -1;
  if (!requestLine || space < 1) throw new Error("a .http file needs a request line: GET /v6/…");
  return { method: requestLine.slice(0, space), url: requestLine.slice(space + 1).trim(), status, headers };
}

// Quoted text and names, words, runs of whitespace, and any other single character.
const sqlTokens = /'(?:[^']|'')*'|"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_]*|\s+|./gs;
const clauseWords = new Set([
  "FROM",
  "WHERE",
  "ORDER",
  "GROUP",
  "HAVING",
  "CROSS",
  "LEFT",
  "LIMIT",
  "OFFSET",
]);

/**
 * A statement laid out for a line diff: whitespace outside quotes becomes one space (none just inside
 * parentheses), and each clause of a SELECT (FROM, WHERE, ORDER BY, joins, LIMIT, OFFSET) starts a
 * line indented by how many SELECTs enclose it. Nothing else changes: it is still the text that was sent.
 */
export function formatSql(text: string): string {
  const tokens = text.trim().match(sqlTokens) ?? [];
  const next = (i: number) => tokens.slice(i + 1).find((t) => t.trim() !== "");
  // For each open parenthesis: does a SELECT start inside it?
  const parens: boolean[] = [];
  let out = "";
  for (const [i, token] of tokens.entries()) {
    if (token.trim() === "") {
      if (!out.endsWith("(") && next(i) !== ")") out += " ";
    } else if (clauseWords.has(token) && (parens.length === 0 || parens.at(-1))) {
      out = `${out.trimEnd()}\n${"  ".repeat(parens.filter(Boolean).length + 1)}${token}`;
    } else {
      if (token === "(") parens.push(next(i) === "SELECT");
      if (token === ")") parens.pop();
      out += token;
    }
  }
  return out;
}

/** JSON in ASCII: a parameter of unusual whitespace (trim's) stays visible and survives editors. */
const asciiJson = (value: unknown) =>
  JSON.stringify(value).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );

/** A .sql file: each statement laid out, then its parameters on a `-- params:` line; a blank line between. */
export function formatStatements(statements: readonly Statement[]): string {
  return statements.map((s) => `${formatSql(s.text)}\n-- params: ${asciiJson(s.values)}\n`).join("\n");
}

/** A .json file: the body indented, or the text as it came when it is not JSON. */
export function formatBody(body: string): string {
  try {
    return `${JSON.stringify(JSON.parse(body), null, 2)}\n`;
  } catch {
    return body;
  }
}

/**
 * The database the server gets: it records the statements run inside a request handler's unit of
 * work (src/http/request-context.ts) while `recording` is set, a write's transaction's too. The
 * credential lookup runs in a preHandler hook, outside that unit, so it is left out: the same rule
 * as x-sql-statements.
 */
function recorder(db: Database) {
  const state: { recording: Statement[] | undefined } = { recording: undefined };
  const record = (statement: Statement) => {
    if (state.recording && currentUnit()) state.recording.push(statement);
  };
  const recordOn = (executor: Executor): Executor => ({
    query(statement) {
      record(statement);
      return executor.query(statement);
    },
    script(text) {
      record({ text, values: [] });
      return executor.script(text);
    },
  });
  const recorded: Database = {
    kind: db.kind,
    get prisma() {
      return db.prisma;
    },
    ...recordOn(db),
    transaction: (work) => db.transaction((tx) => work(recordOn(tx))),
    streams: db.streams,
    close: () => db.close(),
  };
  return { db: recorded, state };
}

// Far above the fixture's ids, as in test/support/server.ts.
const ADMIN_ID = 1_000_000;

/** The real server on a fresh database holding the fixture, with every caller's credential. */
export async function startCaseServer(kind: DatabaseKind): Promise<CaseServer> {
  const test = await freshDatabase(kind);
  const { db, state } = recorder(test.db);
  const config = loadConfig({ LOG_LEVEL: "silent" });
  const app = await buildServer({ db, model: buildModel(), config, logger: createLogger("silent") });
  await test.db.query({ text: `INSERT INTO "actor" ("id") VALUES ($1::int4)`, values: [ADMIN_ID] });
  await test.db.query({
    text: `INSERT INTO "user" ("id", "actor", "username", "email", "password", "jwt_secret", "is_admin")
           VALUES ($1::int4, $1::int4, 'case-admin', 'case-admin@localhost', 'no login', 'test', true)`,
    values: [ADMIN_ID],
  });
  const admin = `Bearer ${await createApiKey(test.db, { actor: ADMIN_ID, name: "cases" })}`;
  const inject = async (method: string, url: string, headers: Record<string, string>, payload?: unknown) => {
    const response = await app.inject({
      method: method as "GET",
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    return { status: response.statusCode, body: response.body, headers: response.headers };
  };
  const callers = { admin, ...(await buildFixture(test.db, inject, admin)) };
  return {
    db: test.db,
    async send(request) {
      // `Authorization: as <caller>` names a caller of the fixture; the admin when absent.
      const { authorization = "as admin", ...headers } = request.headers;
      const who = authorization.startsWith("as ") ? authorization.slice(3) : undefined;
      if (who === undefined) headers.authorization = authorization;
      else if (who !== "anonymous") {
        const credential = callers[who as keyof typeof callers];
        if (credential === undefined) throw new Error(`no fixture caller '${who}'`);
        headers.authorization = credential;
      }
      if (request.body !== undefined) headers["content-type"] ??= "application/json";
      state.recording = [];
      try {
        const reply = await inject(request.method, request.url, headers, request.body);
        return {
          status: reply.status,
          body: reply.body,
          statements: state.recording,
          counted: Number(reply.headers["x-sql-statements"] ?? 0),
        };
      } finally {
        state.recording = undefined;
      }
    },
    async close() {
      await app.close();
      await test.drop();
    },
  };
}

type Inject = (
  method: string,
  url: string,
  headers: Record<string, string>,
  payload?: unknown,
) => Promise<{ status: number; body: string }>;

/**
 * The fixture: the demo seed (organization demo, its user demo, fleets smart-lights, weather-stations
 * and the public kiosks, 9 releases, 60 devices; every value but created_at fixed), and on top of it,
 * through the API as the admin: users alice and outsider, organization acme (alice a member) with the
 * fleet sensors and its two devices, and tags and variables. Answers the credential of each caller.
 */
async function buildFixture(db: Database, inject: Inject, admin: string) {
  await seedDemo(db);
  const call = async (method: string, url: string, payload: unknown, expected: number) => {
    const headers: Record<string, string> = { authorization: admin };
    if (payload !== undefined) headers["content-type"] = "application/json";
    const reply = await inject(method, url, headers, payload);
    if (reply.status !== expected) throw new Error(`${method} ${url}: ${reply.status} ${reply.body}`);
    try {
      return JSON.parse(reply.body) as unknown;
    } catch {
      return reply.body;
    }
  };
  const created = async (resource: string, payload: object) =>
    ((await call("POST", `/v6/${resource}`, payload, 201)) as { id: number }).id;

  const user = (username: string) =>
    created("user", { username, email: `${username}@example.com`, password: `password-${username}` });
  const alice = await user("alice");
  await user("outsider");
  // outsider's personal organization goes (an organization keeps an administrator, so they cannot
  // just leave it): they belong to none, and see only what is public.
  await call("DELETE", "/v6/organization?$filter=handle eq 'outsider'", undefined, 200);
  const acme = await created("organization", { name: "Acme", handle: "acme" });
  await created("organization_membership", { user: alice, is_member_of__organization: acme, role: "member" });
  const sensors = await created("application", {
    app_name: "sensors",
    device_type: "raspberrypi4-64",
    organization: acme,
  });
  await created("release", { belongs_to__application: sensors, commit: "acme-sensors-1", status: "success" });
  const probes = [
    await created("device", { belongs_to__application: sensors, device_name: "probe-1", note: "north" }),
    await created("device", { belongs_to__application: sensors, device_name: "probe-2", note: "O'Brien's" }),
  ];

  // Demo devices 1 to 3 are smart-lights-01 to -03; 41 is kiosks-01.
  const tags: [number, string, string][] = [
    [1, "location", "hall"],
    [1, "floor", "1"],
    [2, "location", "kitchen"],
    [3, "floor", "2"],
    [41, "location", "lobby"],
    [probes[0] as number, "location", "roof"],
  ];
  for (const [device, tag_key, value] of tags) await created("device_tag", { device, tag_key, value });
  const variables: [number, string, string][] = [
    [1, "DEBUG", "1"],
    [1, "MODE", "night"],
    [2, "DEBUG", "0"],
    [probes[1] as number, "MODE", "day"],
  ];
  for (const [device, name, value] of variables)
    await created("device_environment_variable", { device, name, value });

  const login = async (username: string, password: string) =>
    `Bearer ${(await call("POST", "/login_", { username, password }, 200)) as string}`;
  return {
    demo: await login("demo", "demo-password"),
    alice: await login("alice", "password-alice"),
    outsider: await login("outsider", "password-outsider"),
  };
}
