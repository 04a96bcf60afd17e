// A sent command's jobs: one progress bar over all of them, moved by each job's `commandJob`
// subscription until every job is final, then each device's result.
import { useQuery, useSubscription } from "@urql/preact";
import { useEffect, useState } from "preact/hooks";
import { href } from "../router.ts";
import { finalStatuses, JOB, JOB_RESULTS, type JobCounts } from "./commands.ts";
import { ErrorNote } from "./feedback.tsx";

function JobFeed(props: { id: number; onCounts: (counts: JobCounts) => void }) {
  const [result] = useSubscription<{ commandJob: JobCounts }>({ query: JOB, variables: { id: props.id } });
  const counts = result.data?.commandJob;
  const { onCounts } = props;
  useEffect(() => {
    if (counts) onCounts(counts);
  }, [counts, onCounts]);
  return result.error ? <ErrorNote error={result.error} /> : null;
}

interface ResultRow {
  id: number;
  status: string;
  statusCode: number | null;
  error: string | null;
  device: { id: number; deviceName: string; uuid: string } | null;
}

function Results({ ids }: { ids: number[] }) {
  const [result] = useQuery<{ commandJobs: { id: number; path: string; commandResult: ResultRow[] }[] }>({
    query: JOB_RESULTS,
    variables: { ids },
    requestPolicy: "network-only",
  });
  const rows = (result.data?.commandJobs ?? []).flatMap((job) => job.commandResult);
  return (
    <>
      <ErrorNote error={result.error} />
      {rows.length > 0 ? (
        <table class="data" data-testid="job-results">
          <caption>Result on each device</caption>
          <thead>
            <tr>
              <th scope="col">Device</th>
              <th scope="col">Result</th>
              <th scope="col">Status code</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.id}>
                <th scope="row">
                  {row.device ? (
                    <a href={href.device(row.device.id)}>{row.device.deviceName}</a>
                  ) : (
                    "a deleted device"
                  )}
                </th>
                <td>{row.status}</td>
                <td>{row.statusCode ?? ""}</td>
                <td>{row.error ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

export function JobRun(props: { label: string; ids: number[]; onFinished: () => void }) {
  const [jobs, setJobs] = useState<ReadonlyMap<number, JobCounts>>(new Map());
  const [onCounts] = useState(
    () => (counts: JobCounts) => setJobs((all) => new Map(all).set(counts.id, counts)),
  );
  const all = [...jobs.values()];
  const max = all.reduce((sum, job) => sum + job.targetedCount, 0);
  const done = all.reduce((sum, job) => sum + job.doneCount, 0);
  const finished = all.length === props.ids.length && all.every((job) => finalStatuses.has(job.status));
  const { onFinished } = props;
  useEffect(() => {
    if (finished) onFinished();
  }, [finished, onFinished]);
  const ok = all.reduce((sum, job) => sum + job.okCount, 0);
  const failed = all.reduce((sum, job) => sum + job.failedCount, 0);
  const skipped = all.reduce((sum, job) => sum + job.skippedCount, 0);
  const statuses = [...new Set(all.map((job) => job.status))].join(", ");
  return (
    <section aria-labelledby="run" class="run">
      <h2 id="run">{props.label}</h2>
      {props.ids.map((id) => (
        <JobFeed key={id} id={id} onCounts={onCounts} />
      ))}
      <div
        class="progress"
        role="progressbar"
        aria-label="Devices done"
        aria-valuemin={0}
        aria-valuemax={max}
        aria-valuenow={done}
        aria-valuetext={`${done} of ${max} devices done`}
      >
        <div class="bar" style={{ width: max ? `${(100 * done) / max}%` : "0%" }} />
      </div>
      <p role="status" data-testid="job-status">
        {done} of {max} devices done: {ok} succeeded, {failed} failed, {skipped} skipped.{" "}
        {finished ? `Finished (${statuses}).` : statuses ? `Job ${statuses}.` : "Starting…"}
      </p>
      {finished ? <Results ids={props.ids} /> : null}
    </section>
  );
}
