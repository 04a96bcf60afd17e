// The raw ceiling: a minimal node:http + pg server that answers exactly the requests of the
// workloads with hand-written SQL (one named prepared statement each) and the same JSON fleetgate
// sends. No authentication, no parsing beyond pulling the key out of the URL or the GraphQL
// variables: whatever fleetgate spends beyond this is its cost of being general.
// Run as its own process: `node --import tsx bench/baseline.ts` with DATABASE_URL, PORT, POOL_SIZE.

import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import pg from "pg";
import { KeyBox } from "../src/auth/key-box.ts";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE) });
pool.on("error", () => {});

const FIELDS = `d.id, d.uuid, d.device_name, d.is_online`;
// Ties on device_name are broken by id, as fleetgate orders every page.
const PAGE = `ORDER BY d.device_name, d.id LIMIT 50`;

/**
 * The GraphQL statements, written for a document with or without a `__typename` at the end of each
 * selection set below the root (Apollo Client's cache adds them to every document it sends).
 */
function graphqlStatements(typed: boolean) {
  const typename = (name: string) => (typed ? `, '__typename', '${name}'` : "");
  const device = `'id', d.id, 'uuid', d.uuid, 'deviceName', d.device_name, 'isOnline', d.is_online${typename("Device")}`;
  return {
    w4a: `SELECT json_build_object(${device})::text AS body FROM device d WHERE d.uuid = $1`,
    w4b: `SELECT coalesce(json_agg(t.o), '[]')::text AS body FROM (
          SELECT json_build_object('id', d.id, 'uuid', d.uuid, 'deviceName', d.device_name, 'isOnline', d.is_online,
            'belongsToApplication', json_build_object('appName', a.app_name${typename("Application")})${typename("Device")}) AS o
          FROM device d JOIN application a ON a.id = d.belongs_to__application
          WHERE d.belongs_to__application = $1 AND d.is_online ${PAGE}) t`,
    w4c: `SELECT json_build_object('id', a.id, 'appName', a.app_name, 'ownsDevice', coalesce((
            SELECT json_agg(x.o) FROM (SELECT json_build_object(${device}) AS o
            FROM device d WHERE d.belongs_to__application = a.id AND d.is_online ${PAGE}) x), '[]')${typename("Application")})::text AS body
          FROM application a WHERE a.id = $1`,
    // W4d: every alias in one statement, each its own lookup by uuid, null when there is no such device.
    w4d: `SELECT json_object_agg('a' || (u.i - 1), (
            SELECT json_build_object(${device}) FROM device d WHERE d.uuid = u.uuid) ORDER BY u.i)::text AS body
          FROM unnest($1::text[]) WITH ORDINALITY AS u(uuid, i)`,
  };
}

const graphqlTyped = graphqlStatements(true);

const statements = {
  w1: `SELECT coalesce(json_agg(t), '[]')::text AS body FROM (SELECT ${FIELDS} FROM device d WHERE d.uuid = $1) t`,
  w2a: `SELECT coalesce(json_agg(t), '[]')::text AS body FROM (
          SELECT ${FIELDS}, json_build_array(json_build_object('app_name', a.app_name)) AS belongs_to__application
          FROM device d JOIN application a ON a.id = d.belongs_to__application
          WHERE d.belongs_to__application = $1 AND d.is_online ${PAGE}) t`,
  w2b: `SELECT coalesce(json_agg(t), '[]')::text AS body FROM (
          SELECT a.id, a.app_name, coalesce((SELECT json_agg(x) FROM (
            SELECT ${FIELDS} FROM device d WHERE d.belongs_to__application = a.id AND d.is_online ${PAGE}) x),
            '[]') AS owns__device
          FROM application a WHERE a.id = $1) t`,
  ...graphqlStatements(false),
  w4a_typed: graphqlTyped.w4a,
  w4b_typed: graphqlTyped.w4b,
  w4c_typed: graphqlTyped.w4c,
  w4d_typed: graphqlTyped.w4d,
  w3: `UPDATE device SET note = $1 WHERE belongs_to__application = ANY($2::int4[])`,
  w5: `SELECT id, uuid, supervisor_api_address, supervisor_api_port, supervisor_api_key_ciphertext
         FROM device WHERE belongs_to__application = $1 AND is_online`,
  secret: `SELECT value FROM setting WHERE name = 'supervisor_key_secret'`,
} as const;

async function one(name: keyof typeof statements, values: unknown[]): Promise<string | undefined> {
  const result = await pool.query<{ body: string }>({ name, text: statements[name], values });
  return result.rows[0]?.body;
}

function send(response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) {
  response.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    ...headers,
  });
  response.end(body);
}

function readBody(incoming: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    incoming.on("error", reject);
  });
}

const routes: [RegExp, (match: RegExpExecArray) => Promise<string>][] = [
  [/^\/v6\/device\(uuid=%27([0-9a-f]+)%27\)\?/, async (m) => `{"d":${await one("w1", [m[1]])}}`],
  [
    /^\/v6\/device\?\$filter=belongs_to__application%20eq%20(\d+)%20/,
    async (m) => `{"d":${await one("w2a", [Number(m[1])])}}`,
  ],
  [/^\/v6\/application\((\d+)\)\?/, async (m) => `{"d":${await one("w2b", [Number(m[1])])}}`],
];

async function graphql(body: string): Promise<string> {
  const { operationName, query, variables } = JSON.parse(body) as {
    operationName: string;
    query: string;
    variables: Record<string, unknown> & { uuid?: string; fleet?: number };
  };
  // Apollo Client's documents ask every object for its __typename (bench/apollo-request.ts).
  const typed: "" | "_typed" = query.includes("__typename") ? "_typed" : "";
  switch (operationName) {
    case "DeviceByUuid":
      return `{"data":{"device":${(await one(`w4a${typed}` as const, [variables.uuid])) ?? "null"}}}`;
    case "FleetDevices":
      return `{"data":{"devices":${await one(`w4b${typed}` as const, [variables.fleet])}}}`;
    case "FleetWithDevices":
      return `{"data":{"application":${(await one(`w4c${typed}` as const, [variables.fleet])) ?? "null"}}}`;
    case "DeviceAliases": {
      // u0, u1, …: the variables in alias order.
      const uuids = Object.keys(variables).map((_, i) => variables[`u${i}`]);
      return `{"data":${await one(`w4d${typed}` as const, [uuids])}}`;
    }
    default:
      throw new Error(`unknown operation ${operationName}`);
  }
}

async function bulkPatch(url: string, body: string): Promise<number> {
  const match = /belongs_to__application in \(([\d, ]+)\)/.exec(decodeURIComponent(url));
  const fleets = (match?.[1] ?? "").split(",").map((id) => Number(id.trim()));
  const { note } = JSON.parse(body) as { note: string };
  const result = await pool.query({ name: "w3", text: statements.w3, values: [note, fleets] });
  return result.rowCount ?? 0;
}

// The same keep-alive agent and concurrency the proxy uses, so W5 compares the work around the calls.
const agent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 });
const PROXY_CONCURRENCY = Number(process.env.PROXY_CONCURRENCY ?? 128);
let keys: KeyBox | undefined;

function ping(address: string, port: number, apiKey: string): Promise<{ statusCode: number; body: string }> {
  return new Promise((resolve) => {
    const outgoing = request(
      { agent, host: address, port, method: "GET", path: `/ping?apikey=${encodeURIComponent(apiKey)}` },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () =>
          resolve({ statusCode: answer.statusCode ?? 502, body: Buffer.concat(chunks).toString("utf8") }),
        );
      },
    );
    outgoing.on("error", () => resolve({ statusCode: 502, body: "" }));
    outgoing.end();
  });
}

interface Target {
  id: number;
  uuid: string;
  supervisor_api_address: string;
  supervisor_api_port: number;
  supervisor_api_key_ciphertext: string;
}

async function fanOut(body: string): Promise<string> {
  const { appId } = JSON.parse(body) as { appId: number };
  keys ??= new KeyBox(
    (await pool.query<{ value: string }>({ name: "secret", text: statements.secret })).rows[0]?.value ?? "",
  );
  const { rows } = await pool.query<Target>({ name: "w5", text: statements.w5, values: [appId] });
  const results: unknown[] = new Array(rows.length);
  let next = 0;
  const worker = async () => {
    while (next < rows.length) {
      const index = next++;
      const row = rows[index] as Target;
      const key = (keys as KeyBox).unseal(row.supervisor_api_key_ciphertext);
      const answer = await ping(row.supervisor_api_address, row.supervisor_api_port, key);
      results[index] = { deviceId: row.id, uuid: row.uuid, statusCode: answer.statusCode, body: answer.body };
    }
  };
  await Promise.all(Array.from({ length: Math.min(PROXY_CONCURRENCY, rows.length) }, worker));
  return JSON.stringify(results);
}

async function handle(incoming: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = incoming.url ?? "/";
  if (url === "/ping") return send(response, 200, "OK", { "content-type": "text/plain" });
  if (incoming.method === "GET") {
    for (const [pattern, answer] of routes) {
      const match = pattern.exec(url);
      if (match) return send(response, 200, await answer(match));
    }
  }
  if (incoming.method === "POST" && url === "/graphql")
    return send(response, 200, await graphql(await readBody(incoming)));
  if (incoming.method === "PATCH" && url.startsWith("/v6/device?")) {
    const affected = await bulkPatch(url, await readBody(incoming));
    return send(response, 200, '"OK"', { "x-affected-rows": String(affected) });
  }
  if (incoming.method === "POST" && url === "/supervisor/ping")
    return send(response, 207, await fanOut(await readBody(incoming)));
  send(response, 404, '"Not found"');
}

createServer((incoming, response) => {
  handle(incoming, response).catch((error: Error) => send(response, 500, JSON.stringify(error.message)));
}).listen(Number(process.env.PORT), process.env.HOST ?? "127.0.0.1").keepAliveTimeout = 60_000;
