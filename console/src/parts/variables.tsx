import { useState } from "preact/hooks";
import { isSecretName } from "../status.ts";

export interface Variable {
  readonly id: number;
  readonly name: string;
  readonly value: string;
}

function Value({ variable }: { variable: Variable }) {
  const [shown, setShown] = useState(false);
  if (!isSecretName(variable.name)) return <code>{variable.value}</code>;
  return (
    <>
      <code>{shown ? variable.value : "••••••••"}</code>{" "}
      <button
        type="button"
        class="small"
        aria-pressed={shown}
        aria-label={`${shown ? "Hide" : "Show"} the value of ${variable.name}`}
        onClick={() => setShown(!shown)}
      >
        {shown ? "Hide" : "Show"}
      </button>
    </>
  );
}

/** Variables (or tags) as a table of names and values; values of credential-like names are masked. */
export function VariableTable(props: { caption: string; rows: readonly Variable[]; nameHeader?: string }) {
  if (props.rows.length === 0)
    return (
      <p>
        <strong>{props.caption}:</strong> none.
      </p>
    );
  return (
    <table class="data compact">
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">{props.nameHeader ?? "Name"}</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr key={row.id}>
            <th scope="row">
              <code>{row.name}</code>
            </th>
            <td>
              <Value variable={row} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
