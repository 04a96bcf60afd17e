import { gql, useMutation, useQuery } from "@urql/preact";
import { useState } from "preact/hooks";
import { ErrorNote } from "../parts/feedback.tsx";
import { callAccount, currentSession } from "../session.ts";
import { formatTime } from "../status.ts";

const KEYS = gql(`
  query ConsoleKeys($actor: Int!) {
    apiKeys(where: { isOfActor: { eq: $actor } }, orderBy: [{ createdAt: DESC }]) { id name description createdAt expiryDate }
  }
`);
const REVOKE = gql(`mutation ConsoleRevokeKey($id: Int!) { deleteApiKey(id: $id) { id } }`);

interface Key {
  id: number;
  name: string | null;
  description: string | null;
  createdAt: string;
  expiryDate: string | null;
}

function NewKey({ onCreated }: { onCreated: () => void }) {
  const [created, setCreated] = useState<string>();
  const [error, setError] = useState<string>();
  const session = currentSession();
  async function submit(event: Event) {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    setError(undefined);
    try {
      const key = await callAccount("/api-key/v1", {
        actorType: "user",
        actorTypeId: session?.who.userId,
        name: String(data.get("name") ?? ""),
        description: String(data.get("description") ?? "") || undefined,
      });
      setCreated(String(key));
      form.reset();
      onCreated();
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  }
  return (
    <section aria-labelledby="new-key">
      <h2 id="new-key">New key</h2>
      <form class="inline" onSubmit={submit}>
        <label for="key-name">Name</label>
        <input id="key-name" name="name" required maxLength={255} />
        <label for="key-description">Description</label>
        <input id="key-description" name="description" maxLength={255} />
        <button type="submit">Create key</button>
      </form>
      <ErrorNote error={error} />
      {created ? (
        <div class="once" role="status">
          <p>
            Your new key, shown this once (fleetgate keeps only its hash):{" "}
            <code data-testid="new-key">{created}</code>
          </p>
          <button type="button" onClick={() => setCreated(undefined)}>
            I have copied it
          </button>
        </div>
      ) : null}
    </section>
  );
}

function KeyRow({ apiKey, onRevoked }: { apiKey: Key; onRevoked: () => void }) {
  const [asking, setAsking] = useState(false);
  const [state, revoke] = useMutation(REVOKE);
  const name = apiKey.name ?? `key ${apiKey.id}`;
  return (
    <tr>
      <th scope="row">{name}</th>
      <td>{apiKey.description ?? ""}</td>
      <td>{formatTime(apiKey.createdAt)}</td>
      <td>{apiKey.expiryDate ? formatTime(apiKey.expiryDate) : "never"}</td>
      <td>
        {asking ? (
          <>
            <button
              type="button"
              onClick={async () => {
                const result = await revoke({ id: apiKey.id });
                if (!result.error) onRevoked();
                setAsking(false);
              }}
            >
              Yes, revoke {name}
            </button>{" "}
            <button type="button" onClick={() => setAsking(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button type="button" aria-label={`Revoke ${name}`} onClick={() => setAsking(true)}>
            Revoke
          </button>
        )}
        <ErrorNote error={state.error} />
      </td>
    </tr>
  );
}

export function KeysPage() {
  const session = currentSession();
  const [result, refetch] = useQuery<{ apiKeys: Key[] }>({
    query: KEYS,
    variables: { actor: session?.who.actor ?? 0 },
  });
  const reload = () => refetch({ requestPolicy: "network-only" });
  const keys = result.data?.apiKeys ?? [];
  return (
    <>
      <h1 tabIndex={-1}>API keys</h1>
      <p>Keys with your full rights, for scripts and tools. A revoked key stops working at once.</p>
      <NewKey onCreated={reload} />
      <section aria-labelledby="your-keys">
        <h2 id="your-keys">Your keys</h2>
        <ErrorNote error={result.error} />
        {keys.length === 0 && result.data ? <p>You have no API keys.</p> : null}
        {keys.length > 0 ? (
          <table class="data" data-testid="keys">
            <caption>{keys.length === 1 ? "1 key" : `${keys.length} keys`}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Description</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <KeyRow key={key.id} apiKey={key} onRevoked={reload} />
              ))}
            </tbody>
          </table>
        ) : null}
      </section>
    </>
  );
}
