import { useClient, useQuery } from "@urql/preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import {
  type CommandSpec,
  commandMutation,
  commands,
  FLEET_CHOICES,
  ONLINE_DEVICES,
  PAST_JOBS,
} from "../parts/commands.ts";
import { ErrorNote } from "../parts/feedback.tsx";
import { JobRun } from "../parts/job-run.tsx";
import { formatTime } from "../status.ts";

interface Plan {
  spec: CommandSpec;
  force: boolean;
  fleet: { id: number; appName: string };
  devices: { id: number; deviceName: string }[] | undefined;
}
interface Run {
  label: string;
  ids: number[];
}

const targetText = (plan: Plan) =>
  plan.devices
    ? `${plan.devices.length} chosen device${plan.devices.length === 1 ? "" : "s"} of ${plan.fleet.appName}`
    : `every online device of ${plan.fleet.appName}`;

function PastJobs({ refresh }: { refresh: number }) {
  const [result, refetch] = useQuery<{ commandJobs: Record<string, never>[] }>({ query: PAST_JOBS });
  useEffect(() => {
    if (refresh) refetch({ requestPolicy: "network-only" });
  }, [refresh, refetch]);
  const jobs = result.data?.commandJobs ?? [];
  return (
    <section aria-labelledby="past">
      <h2 id="past">Past jobs</h2>
      <ErrorNote error={result.error} />
      {jobs.length === 0 ? <p>No jobs yet.</p> : null}
      {jobs.length > 0 ? (
        <table class="data" data-testid="past-jobs">
          <caption>The 20 newest jobs you can see</caption>
          <thead>
            <tr>
              <th scope="col">Job</th>
              <th scope="col">Command</th>
              <th scope="col">Target</th>
              <th scope="col">Outcome</th>
              <th scope="col">Devices (ok / failed / skipped)</th>
              <th scope="col">Sent</th>
            </tr>
          </thead>
          <tbody>
            {jobs.map((job) => (
              <tr key={job.id}>
                <td>{job.id}</td>
                <td>
                  <code>{String(job.path)}</code>
                </td>
                <td>
                  <code>{JSON.stringify(job.target)}</code>
                </td>
                <td>{job.status}</td>
                <td>
                  {job.targetedCount} ({job.okCount} / {job.failedCount} / {job.skippedCount})
                </td>
                <td>{formatTime(job.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

export function CommandsPage(props: { fleet?: number }) {
  const client = useClient();
  const [fleets] = useQuery<{ myApplications: { id: number; appName: string }[] }>({ query: FLEET_CHOICES });
  const [fleetId, setFleetId] = useState<number | undefined>(props.fleet);
  const [scope, setScope] = useState<"fleet" | "devices">("fleet");
  const [chosen, setChosen] = useState<ReadonlySet<number>>(new Set());
  const [plan, setPlan] = useState<Plan>();
  const [run, setRun] = useState<Run>();
  const [error, setError] = useState<string>();
  const [finishedRuns, setFinishedRuns] = useState(0);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const choices = fleets.data?.myApplications ?? [];
  const fleet = choices.find((f) => f.id === fleetId) ?? choices[0];
  const [online] = useQuery<{ devices: { id: number; deviceName: string }[] }>({
    query: ONLINE_DEVICES,
    variables: { fleet: fleet?.id ?? 0 },
    pause: !fleet || scope !== "devices",
  });
  useEffect(() => {
    if (plan) confirmRef.current?.focus();
  }, [plan]);
  const onFinished = useCallback(() => setFinishedRuns((n) => n + 1), []);

  async function send(next: Plan) {
    setPlan(undefined);
    setError(undefined);
    const targets = next.devices ? next.devices.map((d) => ({ deviceId: d.id })) : [{ appId: next.fleet.id }];
    const mutation = commandMutation(next.spec);
    const ids: number[] = [];
    const errors: string[] = [];
    for (const target of targets) {
      const variables = {
        target,
        key: crypto.randomUUID(),
        ...(next.spec.force ? { force: next.force } : {}),
      };
      const result = await client.mutation(mutation, variables).toPromise();
      const job = result.data?.sent?.job as { id: number } | null | undefined;
      if (job) ids.push(job.id);
      else errors.push(result.error?.message.replace(/^\[\w+\] /, "") ?? "no job was made");
    }
    if (errors.length > 0) setError(errors.join("; "));
    if (ids.length > 0) setRun({ label: `${next.spec.label}: ${targetText(next)}`, ids });
  }

  function submit(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const spec = commands.find((c) => c.value === form.get("command"));
    if (!spec || !fleet) return;
    const devices =
      scope === "devices" ? (online.data?.devices ?? []).filter((d) => chosen.has(d.id)) : undefined;
    if (devices && devices.length === 0) {
      setError("Choose at least one device.");
      return;
    }
    const next = { spec, force: form.get("force") === "on", fleet, devices };
    if (spec.destructive) setPlan(next);
    else void send(next);
  }

  return (
    <>
      <h1 tabIndex={-1}>Commands</h1>
      <form class="command" onSubmit={submit}>
        <label for="fleet">Fleet</label>
        <select
          id="fleet"
          value={fleet ? String(fleet.id) : ""}
          onChange={(e) => setFleetId(Number(e.currentTarget.value))}
        >
          {choices.map((f) => (
            <option key={f.id} value={String(f.id)}>
              {f.appName}
            </option>
          ))}
        </select>
        <fieldset>
          <legend>Send to</legend>
          <label>
            <input type="radio" name="scope" checked={scope === "fleet"} onChange={() => setScope("fleet")} />{" "}
            every online device of the fleet
          </label>
          <label>
            <input
              type="radio"
              name="scope"
              checked={scope === "devices"}
              onChange={() => setScope("devices")}
            />{" "}
            the devices I choose
          </label>
        </fieldset>
        {scope === "devices" ? (
          <fieldset class="devices">
            <legend>Online devices</legend>
            {(online.data?.devices ?? []).length === 0 ? <p>No online device in this fleet.</p> : null}
            {(online.data?.devices ?? []).map((d) => (
              <label key={d.id}>
                <input
                  type="checkbox"
                  checked={chosen.has(d.id)}
                  onChange={(e) => {
                    const next = new Set(chosen);
                    if (e.currentTarget.checked) next.add(d.id);
                    else next.delete(d.id);
                    setChosen(next);
                  }}
                />{" "}
                {d.deviceName}
              </label>
            ))}
          </fieldset>
        ) : null}
        <label for="command">Command</label>
        <select id="command" name="command">
          {commands.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
        <label class="check">
          <input type="checkbox" name="force" /> Force (override the devices' update locks, for update and
          reboot)
        </label>
        <button type="submit" disabled={!fleet || plan !== undefined}>
          Send
        </button>
      </form>
      {plan ? (
        <div
          class="confirm"
          role="alertdialog"
          aria-labelledby="confirm-title"
          aria-describedby="confirm-text"
        >
          <h2 id="confirm-title">Confirm: {plan.spec.label}</h2>
          <p id="confirm-text">
            This {plan.spec.destructive} {targetText(plan)}
            {plan.force ? ", overriding their update locks" : ""}. Continue?
          </p>
          <button type="button" ref={confirmRef} onClick={() => void send(plan)}>
            Yes, {plan.spec.label.toLowerCase()}
          </button>{" "}
          <button type="button" onClick={() => setPlan(undefined)}>
            Cancel
          </button>
        </div>
      ) : null}
      <ErrorNote error={error} />
      {run ? (
        <JobRun key={run.ids.join(",")} label={run.label} ids={run.ids} onFinished={onFinished} />
      ) : null}
      <PastJobs refresh={finishedRuns} />
    </>
  );
}
