import { useEffect, useRef, useState } from "preact/hooks";
import { ErrorNote } from "../parts/feedback.tsx";
import { signInWithKey, signInWithPassword, signOutReason } from "../session.ts";

function useSubmit(action: (form: FormData) => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await action(new FormData(event.currentTarget as HTMLFormElement));
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
      setBusy(false);
    }
  };
  return { busy, error, submit };
}

export function SignInPage() {
  const reason = signOutReason();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const password = useSubmit((form) =>
    signInWithPassword(String(form.get("username") ?? ""), String(form.get("password") ?? "")),
  );
  const key = useSubmit((form) => signInWithKey(String(form.get("apikey") ?? "")));
  return (
    <main id="main" class="sign-in">
      <h1 ref={heading} tabIndex={-1}>
        Sign in to fleetgate
      </h1>
      {reason ? (
        <p class="error" role="alert" data-testid="signed-out-reason">
          You were signed out. {reason}
        </p>
      ) : null}
      <form onSubmit={password.submit} aria-labelledby="with-password">
        <h2 id="with-password">With your password</h2>
        <label for="username">Username or e-mail</label>
        <input id="username" name="username" autoComplete="username" required />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autoComplete="current-password" required />
        <ErrorNote error={password.error} />
        <button type="submit" disabled={password.busy}>
          Sign in
        </button>
      </form>
      <form onSubmit={key.submit} aria-labelledby="with-key">
        <h2 id="with-key">With an API key</h2>
        <label for="apikey">API key</label>
        <input id="apikey" name="apikey" type="password" autoComplete="off" spellcheck={false} required />
        <ErrorNote error={key.error} />
        <button type="submit" disabled={key.busy}>
          Use this key
        </button>
      </form>
      <p class="hint">
        Your credential stays in this browser tab only (session storage) and is forgotten when you sign out or
        close the tab.
      </p>
    </main>
  );
}
