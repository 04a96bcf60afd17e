import { gql, useQuery } from "@urql/preact";
import { DeviceTable } from "../parts/device-table.tsx";
import { ErrorNote, Loading } from "../parts/feedback.tsx";
import { VariableTable } from "../parts/variables.tsx";
import { href } from "../router.ts";
import { formatTime } from "../status.ts";

const FLEET = gql(`
  query ConsoleFleet($id: Int!) {
    application(id: $id) {
      id appName slug deviceType isPublic shouldTrackLatestRelease
      shouldBeRunningRelease { id rawVersion commit }
      ownsReleaseCount
      ownsRelease(first: 20, orderBy: [{ createdAt: DESC }]) { id rawVersion commit status isFinal createdAt }
      applicationEnvironmentVariable(first: 500, orderBy: [{ name: ASC }]) { id name value }
      applicationConfigVariable(first: 500, orderBy: [{ name: ASC }]) { id name value }
    }
  }
`);

interface Release {
  id: number;
  rawVersion: string | null;
  commit: string;
  status: string;
  isFinal: boolean;
  createdAt: string;
}
interface Fleet {
  id: number;
  appName: string;
  slug: string;
  deviceType: string | null;
  isPublic: boolean;
  shouldTrackLatestRelease: boolean;
  shouldBeRunningRelease: { id: number; rawVersion: string | null; commit: string } | null;
  ownsReleaseCount: number;
  ownsRelease: Release[];
  applicationEnvironmentVariable: { id: number; name: string; value: string }[];
  applicationConfigVariable: { id: number; name: string; value: string }[];
}

function Releases({ fleet }: { fleet: Fleet }) {
  const target = fleet.shouldBeRunningRelease;
  return (
    <section aria-labelledby="releases">
      <h2 id="releases">Releases</h2>
      <p data-testid="tracked-release">
        {fleet.shouldTrackLatestRelease ? "Tracks the latest release" : "Pinned"}
        {target ? (
          <>
            {": "}
            <code>{target.rawVersion ?? target.commit.slice(0, 7)}</code>
          </>
        ) : (
          ": no release yet"
        )}
      </p>
      {fleet.ownsRelease.length > 0 ? (
        <table class="data compact">
          <caption>
            {fleet.ownsRelease.length < fleet.ownsReleaseCount
              ? `The ${fleet.ownsRelease.length} newest of ${fleet.ownsReleaseCount} releases`
              : `${fleet.ownsReleaseCount} releases`}
          </caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Commit</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {fleet.ownsRelease.map((release) => (
              <tr key={release.id} aria-current={release.id === target?.id ? "true" : undefined}>
                <td>
                  {release.rawVersion}
                  {release.id === target?.id ? <span class="badge">target</span> : null}
                </td>
                <td>
                  <code>{release.commit.slice(0, 7)}</code>
                </td>
                <td>{release.isFinal ? release.status : `${release.status} (draft)`}</td>
                <td>{formatTime(release.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

export function FleetPage({ id }: { id: number }) {
  const [result] = useQuery<{ application: Fleet | null }>({ query: FLEET, variables: { id } });
  const fleet = result.data?.application;
  return (
    <>
      <p class="crumbs">
        <a href={href.fleets()}>Fleets</a> /
      </p>
      <h1 tabIndex={-1}>{fleet ? fleet.appName : `Fleet ${id}`}</h1>
      <ErrorNote error={result.error} />
      {!result.data && result.fetching ? <Loading what="the fleet" /> : null}
      {result.data && !fleet ? <p>No fleet {id} that you can see.</p> : null}
      {fleet ? (
        <p class="facts">
          <span>
            Slug <code>{fleet.slug}</code>
          </span>
          <span>Device type {fleet.deviceType ?? "none"}</span>
          {fleet.isPublic ? <span>Public</span> : null}
          <a href={href.commands(fleet.id)}>Send a command to this fleet</a>
        </p>
      ) : null}
      {/* The devices are read at once, beside the fleet's own query rather than after it. */}
      {fleet || !result.data ? <DeviceTable fleet={id} /> : null}
      {fleet ? (
        <>
          <Releases fleet={fleet} />
          <section aria-labelledby="variables">
            <h2 id="variables">Variables</h2>
            <VariableTable caption="Environment variables" rows={fleet.applicationEnvironmentVariable} />
            <VariableTable caption="Configuration variables" rows={fleet.applicationConfigVariable} />
          </section>
        </>
      ) : null}
    </>
  );
}
