import type { Target } from "../load.ts";
import type { BenchRequest } from "../workloads.ts";

/**
 * Another data API on the same tables (`npm run bench -- --peers`), measured in the same rounds as
 * fleetgate and the baseline on the workloads it has an equivalent request for.
 */
export interface Peer {
  /** Its key in the results: "postgraphile". */
  readonly name: string;
  /** For reports: "PostGraphile 5.1.5". */
  readonly label: string;
  readonly target: Target;
  /** Its request equivalent to workload `id`, built from the same key; undefined when it has none. */
  request(id: string, key: string): BenchRequest | undefined;
  /** Its answer to workload `id` as the normalised rows `baselineRows` makes of the baseline's. */
  rows(id: string, body: unknown): unknown;
  stop(): Promise<void>;
}

export interface DeviceRow {
  readonly id: number;
  readonly uuid: string;
  readonly device_name: string;
  readonly is_online: boolean;
}

const device = (row: DeviceRow): DeviceRow => ({
  id: row.id,
  uuid: row.uuid,
  device_name: row.device_name,
  is_online: row.is_online,
});

type GraphqlDevice = { id: number; uuid: string; deviceName: string; isOnline: boolean };

type ODataDevice = DeviceRow & { belongs_to__application?: { app_name: string }[] };
type ODataFleet = { id: number; app_name: string; owns__device: DeviceRow[] };

/** The workloads a peer may have an equivalent of: the OData reads and W4d's aliases. */
export const PEER_WORKLOADS: ReadonlySet<string> = new Set(["W1", "W2a", "W2b", "W4d"]);

/** W4d's answer (`a0`…`a299`) as devices in alias order, null where there is none. */
export function aliasRows(data: Record<string, DeviceRow | null>): (DeviceRow | null)[] {
  return Object.keys(data).map((_, i) => {
    const row = data[`a${i}`];
    if (row === undefined) throw new Error(`no alias a${i} in the answer`);
    return row && device(row);
  });
}

/**
 * The baseline's answer to W1, W2a or W2b (OData) as plain rows: W1 devices; W2a devices with
 * their fleet's app_name; W2b fleets with their devices; W4d (GraphQL) the aliases' devices in
 * order. Peers answer in their own shapes; these rows are what must match.
 */
export function baselineRows(id: string, body: unknown): unknown {
  if (id === "W4d") {
    const data = (body as { data: Record<string, GraphqlDevice | null> }).data;
    return aliasRows(
      Object.fromEntries(
        Object.entries(data).map(([alias, row]) => [
          alias,
          row && { id: row.id, uuid: row.uuid, device_name: row.deviceName, is_online: row.isOnline },
        ]),
      ),
    );
  }
  const d = (body as { d: unknown[] }).d;
  switch (id) {
    case "W1":
      return (d as DeviceRow[]).map(device);
    case "W2a":
      return (d as ODataDevice[]).map((row) => ({
        ...device(row),
        app_name: row.belongs_to__application?.[0]?.app_name,
      }));
    case "W2b":
      return (d as ODataFleet[]).map((row) => ({
        id: row.id,
        app_name: row.app_name,
        devices: row.owns__device.map(device),
      }));
    default:
      throw new Error(`no peer rows for workload ${id}`);
  }
}
