// A fleet's devices: one page at a time, sorted and filtered by the server (so 10,000 devices cost
// what 50 do), and kept live by `deviceChanged`: a device that reports is redrawn in place from the
// row the subscription sends, without reading the page again. The subscription follows the rows on
// the page (`id in […]`), not the whole fleet: a subscription first reads every row it follows, and
// 50 rows are read at once where a 10,000-device fleet would cost 100 reads before the first event.
import { gql, useQuery, useSubscription } from "@urql/preact";
import { useEffect, useState } from "preact/hooks";
import { href } from "../router.ts";
import { formatTime, statuses, statusLabel } from "../status.ts";
import { ErrorNote, Loading } from "./feedback.tsx";

const PAGE_SIZE = 50;
const FIELDS = `id uuid deviceName overallStatus isOnline status
  isRunningRelease { id rawVersion commit } lastConnectivityEvent`;

const DEVICES = gql(`
  query ConsoleDevices($where: DeviceWhere!, $orderBy: [DeviceOrderBy!], $first: Int!, $offset: Int!) {
    devices(where: $where, orderBy: $orderBy, first: $first, offset: $offset) { ${FIELDS} }
    devicesCount(where: $where)
  }
`);
const DEVICE_CHANGED = gql(`
  subscription ConsoleDeviceChanged($where: DeviceWhere) { deviceChanged(where: $where) { ${FIELDS} } }
`);

export interface DeviceRow {
  id: number;
  uuid: string;
  deviceName: string;
  overallStatus: string | null;
  isOnline: boolean;
  status: string | null;
  isRunningRelease: { id: number; rawVersion: string | null; commit: string } | null;
  lastConnectivityEvent: string | null;
}

const columns = {
  name: { label: "Name", order: (dir: string) => [{ deviceName: dir }] },
  status: { label: "Status", order: (dir: string) => [{ overallStatus: dir }] },
  release: { label: "Release", order: (dir: string) => [{ isRunningRelease: { rawVersion: dir } }] },
  seen: { label: "Last seen", order: (dir: string) => [{ lastConnectivityEvent: dir }] },
} as const;
type Column = keyof typeof columns;

function SortHeader(props: { column: Column; sort: [Column, "ASC" | "DESC"]; onSort: (c: Column) => void }) {
  const [by, dir] = props.sort;
  const active = by === props.column;
  return (
    <th scope="col" aria-sort={active ? (dir === "ASC" ? "ascending" : "descending") : "none"}>
      <button type="button" class="sort" onClick={() => props.onSort(props.column)}>
        {columns[props.column].label}
        <span aria-hidden="true">{active ? (dir === "ASC" ? " ▲" : " ▼") : ""}</span>
      </button>
    </th>
  );
}

function useLiveRows(fleet: number, ids: readonly number[]) {
  const [live, setLive] = useState<ReadonlyMap<number, DeviceRow>>(new Map());
  const [changed] = useSubscription<{ deviceChanged: DeviceRow }>({
    query: DEVICE_CHANGED,
    variables: { where: { belongsToApplicationId: { eq: fleet }, id: { in: [...ids] } } },
    pause: ids.length === 0,
  });
  useEffect(() => {
    const row = changed.data?.deviceChanged;
    if (row) setLive((rows) => new Map(rows).set(row.id, row));
  }, [changed.data]);
  return { live, error: changed.error };
}

export function DeviceTable({ fleet }: { fleet: number }) {
  const [sort, setSort] = useState<[Column, "ASC" | "DESC"]>(["name", "ASC"]);
  const [name, setName] = useState("");
  const [typed, setTyped] = useState("");
  const [status, setStatus] = useState("");
  const [page, setPage] = useState(0);
  // The name filter asks the server once typing pauses.
  useEffect(() => {
    const timer = setTimeout(() => {
      setName(typed.trim());
      setPage(0);
    }, 250);
    return () => clearTimeout(timer);
  }, [typed]);
  const where = {
    belongsToApplicationId: { eq: fleet },
    ...(name ? { deviceName: { contains: name } } : {}),
    ...(status ? { overallStatus: { eq: status } } : {}),
  };
  const [result] = useQuery<{ devices: DeviceRow[]; devicesCount: number }>({
    query: DEVICES,
    variables: {
      where,
      orderBy: columns[sort[0]].order(sort[1]),
      first: PAGE_SIZE,
      offset: page * PAGE_SIZE,
    },
  });
  const ids = (result.data?.devices ?? []).map((row) => row.id);
  const { live, error } = useLiveRows(fleet, ids);
  const onSort = (column: Column) => {
    setSort(([by, dir]) => [column, by === column && dir === "ASC" ? "DESC" : "ASC"]);
    setPage(0);
  };
  const total = result.data?.devicesCount ?? 0;
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const rows = (result.data?.devices ?? []).map((row) => live.get(row.id) ?? row);
  return (
    <section aria-labelledby="devices">
      <h2 id="devices">Devices</h2>
      <div class="filters">
        <label for="device-name">Name contains</label>
        <input
          id="device-name"
          type="search"
          value={typed}
          onInput={(e) => setTyped(e.currentTarget.value)}
        />
        <label for="device-status">Status</label>
        <select
          id="device-status"
          value={status}
          onChange={(e) => {
            setStatus(e.currentTarget.value);
            setPage(0);
          }}
        >
          <option value="">Any</option>
          {statuses.map((s) => (
            <option key={s.value} value={s.value}>
              {s.label}
            </option>
          ))}
        </select>
      </div>
      <ErrorNote error={result.error ?? error} />
      {!result.data && result.fetching ? <Loading what="devices" /> : null}
      {result.data ? (
        <>
          <table class="data" data-testid="devices" aria-busy={result.fetching ? "true" : "false"}>
            <caption>
              {total} devices{total > PAGE_SIZE ? `, page ${page + 1} of ${pages}` : ""}
            </caption>
            <thead>
              <tr>
                {(Object.keys(columns) as Column[]).map((column) => (
                  <SortHeader key={column} column={column} sort={sort} onSort={onSort} />
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id} data-device={row.uuid}>
                  <th scope="row">
                    <a href={href.device(row.id)}>{row.deviceName}</a>
                  </th>
                  <td data-testid="device-status">
                    <span class={`dot s-${row.overallStatus ?? "unknown"}`} aria-hidden="true" />
                    {statusLabel(row.overallStatus)}
                    {row.status ? <span class="detail"> ({row.status})</span> : null}
                  </td>
                  <td>
                    {row.isRunningRelease
                      ? (row.isRunningRelease.rawVersion ?? row.isRunningRelease.commit.slice(0, 7))
                      : "none"}
                  </td>
                  <td>{formatTime(row.lastConnectivityEvent)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav class="pager" aria-label="Device pages">
            <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
              Previous page
            </button>
            <span>
              Page {page + 1} of {pages}
            </span>
            <button type="button" disabled={page + 1 >= pages} onClick={() => setPage(page + 1)}>
              Next page
            </button>
          </nav>
        </>
      ) : null}
    </section>
  );
}
