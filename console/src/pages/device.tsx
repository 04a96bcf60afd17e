import { gql, useMutation, useQuery, useSubscription } from "@urql/preact";
import { ErrorNote, Loading } from "../parts/feedback.tsx";
import { VariableTable } from "../parts/variables.tsx";
import { href } from "../router.ts";
import { formatTime, statusLabel } from "../status.ts";

// How many of a device's stored status changes the page shows (the API keeps its newest 100).
const HISTORY_SHOWN = 20;
// The live part of the device, read by the page and again by its subscription on each change: the
// stored history comes with it, so a change the device reports appears in the list as it is stored.
const LIVE = `id overallStatus overallProgress status isOnline downloadProgress lastConnectivityEvent
  isRunningRelease { id rawVersion commit }
  deviceStatusChange(first: ${HISTORY_SHOWN}, orderBy: [{ id: DESC }]) { id oldStatus newStatus changedAt }`;
const DEVICE = gql(`
  query ConsoleDevice($id: Int!) {
    device(id: $id) {
      ${LIVE} uuid deviceName isActive ipAddress osVersion osVariant supervisorVersion note createdAt
      updateStatus lastUpdateStatusEvent
      shouldBeRunningRelease { id rawVersion commit }
      belongsToApplication {
        id appName shouldBeRunningRelease { id rawVersion commit }
        ownsRelease(where: { status: { eq: "success" } }, first: 50, orderBy: [{ createdAt: DESC }]) { id rawVersion commit }
      }
      deviceTag(first: 500, orderBy: [{ tagKey: ASC }]) { id tagKey value }
      deviceEnvironmentVariable(first: 500, orderBy: [{ name: ASC }]) { id name value }
      deviceConfigVariable(first: 500, orderBy: [{ name: ASC }]) { id name value }
      commandResult(first: 10, orderBy: [{ createdAt: DESC }]) { id status statusCode error createdAt commandJob { id path } }
    }
  }
`);
const CHANGED = gql(
  `subscription ConsoleDeviceLive($where: DeviceWhere) { deviceChanged(where: $where) { ${LIVE} } }`,
);
const PIN = gql(`
  mutation ConsolePin($id: Int!, $release: Int) {
    updateDevice(id: $id, patch: { shouldBeRunningReleaseId: $release }) { id shouldBeRunningRelease { id rawVersion commit } }
  }
`);

type Release = { id: number; rawVersion: string | null; commit: string };
const releaseName = (r: Release | null | undefined) => (r ? (r.rawVersion ?? r.commit.slice(0, 7)) : "none");
// biome-ignore lint/suspicious/noExplicitAny: the device's many fields are read by name below
type Device = Record<string, any>;

/** The device as its subscription last read it: every change of a watched field or of its status. */
function useLive(id: number): Device | undefined {
  const [result] = useSubscription<{ deviceChanged: Device }>({
    query: CHANGED,
    variables: { where: { id: { eq: id } } },
  });
  return result.data?.deviceChanged;
}

/** The device's stored status changes, newest first, ending with its registration. */
function StatusHistory({ device }: { device: Device }) {
  const changes: Device[] = device.deviceStatusChange ?? [];
  return (
    <table class="data compact" data-testid="history" aria-live="polite">
      <caption>
        Status changes, newest first{changes.length < HISTORY_SHOWN ? "" : ` (the newest ${HISTORY_SHOWN})`}
      </caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">From</th>
          <th scope="col">To</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((change) => (
          <tr key={change.id} data-change={change.id}>
            <td>
              <time dateTime={change.changedAt}>{formatTime(change.changedAt)}</time>
            </td>
            <td>{statusLabel(change.oldStatus)}</td>
            <td>{statusLabel(change.newStatus)}</td>
          </tr>
        ))}
        {changes.length < HISTORY_SHOWN ? (
          <tr>
            <td>
              <time dateTime={device.createdAt}>{formatTime(device.createdAt)}</time>
            </td>
            <td colSpan={2}>Registered</td>
          </tr>
        ) : null}
      </tbody>
    </table>
  );
}

function Pinning({ device }: { device: Device }) {
  const [state, pin] = useMutation(PIN);
  const releases: Release[] = device.belongsToApplication?.ownsRelease ?? [];
  const pinned: Release | null = device.shouldBeRunningRelease;
  return (
    <form
      class="inline"
      onSubmit={(event) => {
        event.preventDefault();
        const value = new FormData(event.currentTarget).get("release");
        void pin({ id: device.id, release: value ? Number(value) : null });
      }}
    >
      <label for="pin">Release to run</label>
      <select id="pin" name="release" defaultValue={pinned ? String(pinned.id) : ""}>
        <option value="">
          Follow the fleet ({releaseName(device.belongsToApplication?.shouldBeRunningRelease)})
        </option>
        {releases.map((r) => (
          <option key={r.id} value={String(r.id)}>
            Pin to {releaseName(r)}
          </option>
        ))}
      </select>
      <button type="submit" disabled={state.fetching}>
        Save
      </button>
      <ErrorNote error={state.error} />
      {state.data && !state.error ? <span role="status">Saved.</span> : null}
    </form>
  );
}

export function DevicePage({ id }: { id: number }) {
  const [result] = useQuery<{ device: Device | null }>({ query: DEVICE, variables: { id } });
  const live = useLive(id);
  const device = result.data?.device ? { ...result.data.device, ...(live ?? {}) } : undefined;
  const fleet = device?.belongsToApplication;
  return (
    <>
      <p class="crumbs">
        <a href={href.fleets()}>Fleets</a> /{" "}
        {fleet ? <a href={href.fleet(fleet.id)}>{fleet.appName}</a> : null} /
      </p>
      <h1 tabIndex={-1}>{device ? device.deviceName : `Device ${id}`}</h1>
      <ErrorNote error={result.error} />
      {!result.data && result.fetching ? <Loading what="the device" /> : null}
      {result.data && !device ? <p>No device {id} that you can see.</p> : null}
      {device ? (
        <>
          <dl class="facts-list" data-testid="device-state">
            <dt>Status</dt>
            <dd>
              {statusLabel(device.overallStatus)}
              {device.status ? ` (${device.status})` : ""}
              {device.overallProgress != null ? `, ${device.overallProgress}%` : ""}
            </dd>
            <dt>Online</dt>
            <dd>{device.isOnline ? "yes" : "no"}</dd>
            <dt>Last seen</dt>
            <dd>{formatTime(device.lastConnectivityEvent)}</dd>
            <dt>UUID</dt>
            <dd>
              <code>{device.uuid}</code>
            </dd>
            <dt>Running release</dt>
            <dd>{releaseName(device.isRunningRelease)}</dd>
            <dt>Should run</dt>
            <dd>
              {device.shouldBeRunningRelease
                ? `${releaseName(device.shouldBeRunningRelease)} (pinned)`
                : "the fleet's release"}
            </dd>
            <dt>OS</dt>
            <dd>{[device.osVersion, device.osVariant].filter(Boolean).join(" ") || "unknown"}</dd>
            <dt>Supervisor</dt>
            <dd>{device.supervisorVersion ?? "unknown"}</dd>
            <dt>IP address</dt>
            <dd>{device.ipAddress ?? "unknown"}</dd>
            <dt>Note</dt>
            <dd>{device.note ?? "none"}</dd>
          </dl>
          <p>
            <a href={`${href.commands(fleet?.id)}`}>Send a command</a>
          </p>
          <section aria-labelledby="release">
            <h2 id="release">Release</h2>
            <Pinning device={device} />
          </section>
          <section aria-labelledby="history">
            <h2 id="history">Status history</h2>
            <p class="hint">
              Every change of the device's status, as the API stores it (its newest 100), updated live. Last
              update status: {device.updateStatus ?? "none"} at {formatTime(device.lastUpdateStatusEvent)}.
            </p>
            <StatusHistory device={device} />
            {device.commandResult.length > 0 ? (
              <table class="data compact">
                <caption>Recent commands</caption>
                <thead>
                  <tr>
                    <th scope="col">Command</th>
                    <th scope="col">Result</th>
                    <th scope="col">Sent</th>
                  </tr>
                </thead>
                <tbody>
                  {device.commandResult.map((r: Device) => (
                    <tr key={r.id}>
                      <td>
                        <code>{r.commandJob?.path ?? "?"}</code>
                      </td>
                      <td>
                        {r.status}
                        {r.statusCode ? ` ${r.statusCode}` : ""}
                        {r.error ? `: ${r.error}` : ""}
                      </td>
                      <td>{formatTime(r.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : null}
          </section>
          <section aria-labelledby="tags">
            <h2 id="tags">Tags and variables</h2>
            <VariableTable
              caption="Tags"
              nameHeader="Tag"
              rows={device.deviceTag.map((t: Device) => ({ id: t.id, name: t.tagKey, value: t.value }))}
            />
            <VariableTable caption="Environment variables" rows={device.deviceEnvironmentVariable} />
            <VariableTable caption="Configuration variables" rows={device.deviceConfigVariable} />
          </section>
        </>
      ) : null}
    </>
  );
}
