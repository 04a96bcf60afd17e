import { gql, useQuery, useSubscription } from "@urql/preact";
import { useEffect, useMemo } from "preact/hooks";
import { ErrorNote, Loading } from "../parts/feedback.tsx";
import { StatusChart } from "../parts/status-chart.tsx";
import { href } from "../router.ts";
import { statuses } from "../status.ts";

const aliasOf = (status: string) => `s_${status.replaceAll("-", "_")}`;

// One statement: every fleet of the caller's organizations with a count per status.
const FLEETS = gql(`
  query ConsoleFleets {
    myApplications(orderBy: [{ appName: ASC }]) {
      id
      appName
      slug
      deviceType
      ownsDeviceCount
      ${statuses.map((s) => `${aliasOf(s.value)}: ownsDeviceCount(where: { overallStatus: { eq: "${s.value}" } })`).join("\n")}
    }
  }
`);

const FLEET_CHANGED = gql(`subscription ConsoleFleetChanged { fleetChanged { id } }`);

type FleetRow = {
  id: number;
  appName: string;
  slug: string;
  deviceType: string | null;
  ownsDeviceCount: number;
} & Record<string, unknown>;

export function FleetsPage() {
  const [result, refetch] = useQuery<{ myApplications: FleetRow[] }>({ query: FLEETS });
  const [changes] = useSubscription({ query: FLEET_CHANGED });
  // A fleet or one of its devices changed: read the counts again (one statement), at most twice a second.
  useEffect(() => {
    if (!changes.data) return;
    const timer = setTimeout(() => refetch({ requestPolicy: "network-only" }), 500);
    return () => clearTimeout(timer);
  }, [changes.data, refetch]);
  const fleets = result.data?.myApplications;
  const counts = useMemo(
    () =>
      (fleets ?? []).map((fleet) => ({
        name: fleet.appName,
        counts: Object.fromEntries(statuses.map((s) => [s.value, Number(fleet[aliasOf(s.value)] ?? 0)])),
      })),
    [fleets],
  );
  return (
    <>
      <h1 tabIndex={-1}>Fleets</h1>
      <ErrorNote error={result.error ?? changes.error} />
      {!fleets && result.fetching ? <Loading what="fleets" /> : null}
      {fleets && fleets.length === 0 ? <p>You have no fleets yet.</p> : null}
      {fleets && fleets.length > 0 ? (
        <>
          <StatusChart fleets={counts} />
          <table class="data" data-testid="fleets">
            <caption>Your fleets ({fleets.length})</caption>
            <thead>
              <tr>
                <th scope="col">Fleet</th>
                <th scope="col">Device type</th>
                <th scope="col">Devices</th>
                {statuses.map((s) => (
                  <th scope="col" key={s.value}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {fleets.map((fleet, index) => (
                <tr key={fleet.id}>
                  <th scope="row">
                    <a href={href.fleet(fleet.id)}>{fleet.appName}</a>
                    <span class="slug">{fleet.slug}</span>
                  </th>
                  <td>{fleet.deviceType}</td>
                  <td>{fleet.ownsDeviceCount}</td>
                  {statuses.map((s) => (
                    <td key={s.value}>{counts[index]?.counts[s.value] ?? 0}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </>
  );
}
