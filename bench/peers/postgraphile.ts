import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { PostgresCpu } from "../postgres-cpu.ts";
import { startChild } from "../processes.ts";
import { ALIASES, aliasVariables, type BenchRequest, PAGE } from "../workloads.ts";
import { installPeer } from "./install.ts";
import { aliasRows, type DeviceRow, type Peer } from "./peer.ts";

// PostGraphile 5 (bench/peers/postgraphile/: the Amber preset on schema public, with device.uuid
// tagged unique and ordering/conditions allowed on unindexed columns; see its server.mjs). Its
// generated names: `rowId` for a table's id, `deviceByUuid` from the unique tag,
// `allDevices(condition:, orderBy:, first:) { nodes }` for a filtered page, and relations named
// after the foreign key (`applicationByBelongsToApplication`, `devicesByBelongsToApplication`).
// PRINT_SCHEMA=1 on its server prints the whole schema.

const DEVICE = "rowId uuid deviceName isOnline";
// The baseline and fleetgate break device_name ties by id.
const PAGE_ARGS = `orderBy: [DEVICE_NAME_ASC, ROW_ID_ASC], first: ${PAGE}`;

const documents = {
  W1: {
    operationName: "DeviceByUuid",
    query: `query DeviceByUuid($uuid: String!) { deviceByUuid(uuid: $uuid) { ${DEVICE} } }`,
    variables: (key: string) => ({ uuid: key }),
  },
  W2a: {
    operationName: "FleetDevices",
    query: `query FleetDevices($fleet: Int!) {
  allDevices(condition: {belongsToApplication: $fleet, isOnline: true}, ${PAGE_ARGS}) {
    nodes { ${DEVICE} applicationByBelongsToApplication { appName } }
  }
}`,
    variables: (key: string) => ({ fleet: Number(key) }),
  },
  W2b: {
    operationName: "FleetWithDevices",
    query: `query FleetWithDevices($fleet: Int!) {
  applicationByRowId(rowId: $fleet) {
    rowId appName
    devicesByBelongsToApplication(condition: {isOnline: true}, ${PAGE_ARGS}) { nodes { ${DEVICE} } }
  }
}`,
    variables: (key: string) => ({ fleet: Number(key) }),
  },
  W4d: {
    operationName: "DeviceAliases",
    query: `query DeviceAliases(${Array.from({ length: ALIASES }, (_, i) => `$u${i}: String!`).join(", ")}) {
${Array.from({ length: ALIASES }, (_, i) => `  a${i}: deviceByUuid(uuid: $u${i}) { ${DEVICE} }`).join("\n")}
}`,
    variables: aliasVariables,
  },
} as const;

type Id = keyof typeof documents;
const isId = (id: string): id is Id => Object.hasOwn(documents, id);

interface GraphileDevice {
  rowId: number;
  uuid: string;
  deviceName: string;
  isOnline: boolean;
  applicationByBelongsToApplication?: { appName: string };
}
interface GraphileFleet {
  rowId: number;
  appName: string;
  devicesByBelongsToApplication: { nodes: GraphileDevice[] };
}
interface Answer {
  data?: {
    deviceByUuid?: GraphileDevice | null;
    allDevices?: { nodes: GraphileDevice[] };
    applicationByRowId?: GraphileFleet | null;
  };
  errors?: unknown[];
}

const device = (row: GraphileDevice): DeviceRow => ({
  id: row.rowId,
  uuid: row.uuid,
  device_name: row.deviceName,
  is_online: row.isOnline,
});

/** PostGraphile's answer to W1, W2a, W2b or W4d as the rows `baselineRows` makes of the baseline's. */
export function postgraphileRows(id: string, body: unknown): unknown {
  const { data, errors } = body as Answer;
  if (errors?.length || !data) throw new Error(`PostGraphile answered ${JSON.stringify(body).slice(0, 300)}`);
  switch (id) {
    case "W1":
      return data.deviceByUuid ? [device(data.deviceByUuid)] : [];
    case "W2a":
      return (data.allDevices?.nodes ?? []).map((row) => ({
        ...device(row),
        app_name: row.applicationByBelongsToApplication?.appName,
      }));
    case "W2b": {
      const fleet = data.applicationByRowId;
      return fleet
        ? [
            {
              id: fleet.rowId,
              app_name: fleet.appName,
              devices: fleet.devicesByBelongsToApplication.nodes.map(device),
            },
          ]
        : [];
    }
    case "W4d":
      return aliasRows(
        Object.fromEntries(
          Object.entries(data as Record<string, GraphileDevice | null>).map(([alias, row]) => [
            alias,
            row && device(row),
          ]),
        ),
      );
    default:
      throw new Error(`PostGraphile has no request for ${id}`);
  }
}

/** PostGraphile's GraphQL request equivalent to workload `id` (W1, W2a, W2b, W4d), built from its key. */
export function postgraphileRequest(id: string, key: string): BenchRequest | undefined {
  if (!isId(id)) return undefined;
  const { operationName, query, variables } = documents[id];
  return {
    method: "POST",
    path: "/graphql",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ operationName, query, variables: variables(key) }),
  };
}

/** Installs the peer folder if needed, then starts PostGraphile on its own Node 22 and waits for /ping. */
export async function startPostgraphile(
  databaseUrl: string,
  poolSize: number,
  log: (message: string) => void,
  postgres?: PostgresCpu,
): Promise<Peer> {
  const installed = await installPeer("postgraphile");
  const version = (
    JSON.parse(readFileSync(join(installed.dir, "node_modules", "postgraphile", "package.json"), "utf8")) as {
      version: string;
    }
  ).version;
  log(
    `PostGraphile ${version} ${installed.installed ? "installed" : "already installed"} in ${installed.dir}`,
  );
  const child = await startChild(
    "postgraphile",
    [join(installed.dir, "server.mjs")],
    {
      DATABASE_URL: databaseUrl,
      POOL_SIZE: String(poolSize),
      GRAPHILE_ENV: "production",
      NODE_ENV: "production",
    },
    { command: installed.node, cwd: installed.dir },
  );
  return {
    name: "postgraphile",
    label: `PostGraphile ${version}`,
    target: {
      name: "postgraphile",
      url: child.url,
      pid: child.pid,
      headers: {},
      ...(postgres ? { postgres } : {}),
    },
    request: postgraphileRequest,
    rows: postgraphileRows,
    stop: () => child.stop(),
  };
}
