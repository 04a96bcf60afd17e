import type { CombinedError } from "@urql/core";

/** An error from the API, as text (its message is the API's, never markup). */
export function ErrorNote({ error }: { error: CombinedError | Error | string | undefined }) {
  if (!error) return null;
  const text = typeof error === "string" ? error : error.message.replace(/^\[(GraphQL|Network)\] /, "");
  return (
    <p class="error" role="alert">
      {text}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}
