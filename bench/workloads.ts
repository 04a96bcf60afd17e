// The requests of every load workload, built from one key each. The bench sends them to fleetgate
// and to the baseline alike; test/bench/statements.test.ts sends them to the test server, so the
// statement counts CI checks are those of the requests the bench measures.

import { type ApolloRequest, apolloRequest } from "./apollo-request.ts";

export interface BenchRequest {
  readonly method: "GET" | "POST" | "PATCH";
  /** Path and query, already encoded as the client sends it. */
  readonly path: string;
  readonly body?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** What a workload's key is drawn from; `uuids`: ALIASES device uuids, joined by commas. */
export type KeyKind = "uuid" | "fleet" | "uuids";

/**
 * Who sends it: the bench's admin, or a normal user who is a member of the organization owning
 * every bench fleet (so both see the same rows, and the difference is the permission predicate).
 */
export type Caller = "admin" | "user";

export interface Workload {
  /** W1, W2a, …: the id in reports and in the baseline's dispatch. */
  readonly id: string;
  /** The issue's workload it measures (W1, W2, W4). */
  readonly group: "W1" | "W2" | "W4";
  readonly title: string;
  readonly keys: KeyKind;
  readonly caller: Caller;
  /** A variant sends the same requests as workload `variantOf`, from another caller, in its rounds. */
  readonly variantOf?: string;
  /**
   * Set on Apollo Client 4's request (apollo-request.ts): the hand-written workload it sends the
   * same operation as, which it is compared with in slices of their own (reads.ts).
   */
  readonly handWritten?: Workload;
  /** 1 for every read, and for each GraphQL query operation (its aliases included). */
  readonly expectedStatements: number;
  build(key: string): BenchRequest;
}

export const DEVICE_FIELDS = "id,uuid,device_name,is_online";
export const PAGE = 50;

const json = { "content-type": "application/json" } as const;

// balena-sdk 19 (the /v6 client) sends a device key path with the quotes percent-encoded.
const byUuid = (uuid: string) => `/v6/device(uuid=%27${uuid}%27)?$select=${DEVICE_FIELDS}`;

const fleetDevices = (fleet: string) =>
  `/v6/device?$filter=${encodeURIComponent(`belongs_to__application eq ${fleet} and is_online eq true`)}` +
  `&$expand=${encodeURIComponent("belongs_to__application($select=app_name)")}` +
  `&$select=${DEVICE_FIELDS}&$top=${PAGE}&$orderby=${encodeURIComponent("device_name asc")}`;

const fleetWithDevices = (fleet: string) =>
  `/v6/application(${fleet})?$select=id,app_name&$expand=${encodeURIComponent(
    `owns__device($select=${DEVICE_FIELDS};$filter=is_online eq true;$orderby=device_name asc;$top=${PAGE})`,
  )}`;

/** W4d: how many aliased root fields its one query has. */
export const ALIASES = 300;

const DEVICE_SELECTION = "{ id uuid deviceName isOnline }";

// One variable per alias, so the document is the same for every request and only the values change.
const deviceAliases = `query DeviceAliases(${Array.from({ length: ALIASES }, (_, i) => `$u${i}: String`).join(", ")}) {
${Array.from({ length: ALIASES }, (_, i) => `  a${i}: device(uuid: $u${i}) ${DEVICE_SELECTION}`).join("\n")}
}`;

/** W4d's variables: u0…u299 from a key of comma-joined uuids, repeated when it has fewer. */
export function aliasVariables(uuids: string): Record<string, string> {
  const list = uuids.split(",");
  return Object.fromEntries(Array.from({ length: ALIASES }, (_, i) => [`u${i}`, list[i % list.length]]));
}

/**
 * The GraphQL documents of W4, one root field each but W4d's (ALIASES of them); the baseline
 * dispatches on operationName.
 */
export const graphqlDocuments = {
  DeviceByUuid: `query DeviceByUuid($uuid: String) {
  device(uuid: $uuid) ${DEVICE_SELECTION}
}`,
  FleetDevices: `query FleetDevices($fleet: Int) {
  devices(where: {belongsToApplication: {id: {eq: $fleet}}, isOnline: {eq: true}}, orderBy: [{deviceName: ASC}], first: ${PAGE}) {
    id uuid deviceName isOnline belongsToApplication { appName }
  }
}`,
  FleetWithDevices: `query FleetWithDevices($fleet: Int) {
  application(id: $fleet) {
    id appName
    ownsDevice(where: {isOnline: {eq: true}}, orderBy: [{deviceName: ASC}], first: ${PAGE}) { id uuid deviceName isOnline }
  }
}`,
  DeviceAliases: deviceAliases,
} as const;

export type GraphqlOperation = keyof typeof graphqlDocuments;

// What Apollo Client 4 sends for each document, taken from the real client once (apollo-request.ts).
const apolloRequests = Object.fromEntries(
  await Promise.all(
    Object.entries(graphqlDocuments).map(
      async ([name, document]) => [name, await apolloRequest(document)] as const,
    ),
  ),
) as Record<GraphqlOperation, ApolloRequest>;

/** The operation as Apollo Client 4 sends it, with `variables`. */
export function apolloGraphqlRequest(operationName: GraphqlOperation, variables: Record<string, unknown>) {
  const { headers, body } = apolloRequests[operationName];
  return {
    method: "POST",
    path: "/graphql",
    headers,
    body: JSON.stringify({ ...body, variables }),
  } as const satisfies BenchRequest;
}

export function graphqlRequest(operationName: GraphqlOperation, variables: Record<string, unknown>) {
  return {
    method: "POST",
    path: "/graphql",
    headers: json,
    body: JSON.stringify({ operationName, query: graphqlDocuments[operationName], variables }),
  } as const satisfies BenchRequest;
}

/** The same requests as `workload`, sent by the member user: W1 → W1u, W2a → W2au. */
function asUser(workload: Workload): Workload {
  return {
    ...workload,
    id: `${workload.id}u`,
    title: `${workload.title}, as a member user`,
    caller: "user",
    variantOf: workload.id,
  };
}

const adminWorkloads: readonly Workload[] = [
  {
    id: "W1",
    group: "W1",
    title: "device by uuid, $select",
    keys: "uuid",
    caller: "admin",
    expectedStatements: 1,
    build: (uuid) => ({ method: "GET", path: byUuid(uuid) }),
  },
  {
    id: "W2a",
    group: "W2",
    title: "50 devices of a fleet, $filter $expand $orderby $top",
    keys: "fleet",
    caller: "admin",
    expectedStatements: 1,
    build: (fleet) => ({ method: "GET", path: fleetDevices(fleet) }),
  },
  {
    id: "W2b",
    group: "W2",
    title: "fleet by id, $expand=owns__device(…$top=50)",
    keys: "fleet",
    caller: "admin",
    expectedStatements: 1,
    build: (fleet) => ({ method: "GET", path: fleetWithDevices(fleet) }),
  },
  {
    id: "W4a",
    group: "W4",
    title: "GraphQL device(uuid)",
    keys: "uuid",
    caller: "admin",
    expectedStatements: 1,
    build: (uuid) => graphqlRequest("DeviceByUuid", { uuid }),
  },
  {
    id: "W4b",
    group: "W4",
    title: "GraphQL devices(where fleet, first 50)",
    keys: "fleet",
    caller: "admin",
    expectedStatements: 1,
    build: (fleet) => graphqlRequest("FleetDevices", { fleet: Number(fleet) }),
  },
  {
    id: "W4c",
    group: "W4",
    title: "GraphQL application { ownsDevice(first 50) }",
    keys: "fleet",
    caller: "admin",
    expectedStatements: 1,
    build: (fleet) => graphqlRequest("FleetWithDevices", { fleet: Number(fleet) }),
  },
  {
    id: "W4d",
    group: "W4",
    title: `GraphQL ${ALIASES} aliases of device(uuid), one query`,
    keys: "uuids",
    caller: "admin",
    expectedStatements: 1,
    build: (uuids) => graphqlRequest("DeviceAliases", aliasVariables(uuids)),
  },
];

/** The GraphQL operation each W4 workload sends, and how its key becomes its variables. */
const graphqlOperations: Readonly<
  Record<string, [GraphqlOperation, (key: string) => Record<string, unknown>]>
> = {
  W4a: ["DeviceByUuid", (uuid) => ({ uuid })],
  W4b: ["FleetDevices", (fleet) => ({ fleet: Number(fleet) })],
  W4c: ["FleetWithDevices", (fleet) => ({ fleet: Number(fleet) })],
  W4d: ["DeviceAliases", aliasVariables],
};

/** The same operation as Apollo Client 4 sends it: W4a → W4a-apollo (issue 47). */
function asApollo(workload: Workload): Workload {
  const [operation, variables] = graphqlOperations[workload.id] as [
    GraphqlOperation,
    (key: string) => Record<string, unknown>,
  ];
  return {
    ...workload,
    id: `${workload.id}-apollo`,
    title: `${workload.title}, Apollo Client 4's request`,
    variantOf: workload.id,
    handWritten: workload,
    build: (key) => apolloGraphqlRequest(operation, variables(key)),
  };
}

// Each variant follows its admin workload, so a group's rows stay together in the report.
const userVariants = new Set(["W1", "W2a", "W2b", "W4a", "W4b", "W4c"]);

export const workloads: readonly Workload[] = adminWorkloads.flatMap((workload) => [
  workload,
  ...(userVariants.has(workload.id) ? [asUser(workload)] : []),
  ...(workload.id in graphqlOperations ? [asApollo(workload)] : []),
]);

/** W3: one bulk PATCH of every device of `fleets` (10 fleets of 100 devices: 1,000 rows). */
export function bulkPatch(fleets: readonly number[], note: string): BenchRequest {
  return {
    method: "PATCH",
    path: `/v6/device?$filter=${encodeURIComponent(`belongs_to__application in (${fleets.join(", ")})`)}`,
    headers: json,
    body: JSON.stringify({ note }),
  };
}

/** W5: `/ping` on every online device of a fleet, through the proxy. */
export function proxyPing(fleet: number): BenchRequest {
  return {
    method: "POST",
    path: "/supervisor/ping",
    headers: json,
    body: JSON.stringify({ appId: fleet, method: "GET" }),
  };
}
