// The signed-in credential: a session token from POST /login_ or a pasted API key. It lives in this
// tab's sessionStorage (it survives a reload of the tab, and no other tab or later visit reads it),
// never in localStorage or a cookie (issue 48: "never in localStorage or a cookie readable by
// scripts"). Signing out, or the API refusing it, forgets it.

export interface Who {
  readonly actor: number;
  readonly userId: number;
  readonly username: string;
  readonly email: string | null;
}

export interface Session {
  readonly credential: string;
  readonly kind: "session token" | "API key";
  readonly who: Who;
}

const STORE = "fleetgate.console.session";

type Listener = (session: Session | undefined, reason: string | undefined) => void;
const listeners = new Set<Listener>();
let current: Session | undefined = read();
let reason: string | undefined;

function read(): Session | undefined {
  try {
    const text = sessionStorage.getItem(STORE);
    return text ? (JSON.parse(text) as Session) : undefined;
  } catch {
    return undefined;
  }
}

export const currentSession = (): Session | undefined => current;
/** Why the user was last sent back to sign in (a refused credential), once. */
export const signOutReason = (): string | undefined => reason;

export function onSessionChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function set(session: Session | undefined, why: string | undefined): void {
  current = session;
  reason = why;
  if (session) sessionStorage.setItem(STORE, JSON.stringify(session));
  else sessionStorage.removeItem(STORE);
  for (const listener of listeners) listener(session, why);
}

/** Forgets the credential; `why` is shown on the sign-in page (a revoked or expired credential). */
export function signOut(why?: string): void {
  if (!current && why === undefined) return;
  set(undefined, why);
}

async function errorText(response: Response): Promise<string> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as unknown;
    if (typeof body === "string") return body;
    if (body && typeof body === "object" && "message" in body) return String(body.message);
  } catch {
    // not JSON: the text itself
  }
  return text || response.statusText;
}

/** Who a credential belongs to; only a user's credential signs in to the console. */
async function whoami(credential: string): Promise<Who> {
  const response = await fetch("/actor/v1/whoami", { headers: { Authorization: `Bearer ${credential}` } });
  if (!response.ok) throw new Error(`The API refused this credential: ${await errorText(response)}`);
  const body = (await response.json()) as Record<string, unknown>;
  if (body.actorType !== "user")
    throw new Error(`This is a ${String(body.actorType)}'s key: sign in with a user's credential`);
  return {
    actor: Number(body.id),
    userId: Number(body.actorTypeId),
    username: String(body.username),
    email: typeof body.email === "string" ? body.email : null,
  };
}

export async function signInWithPassword(username: string, password: string): Promise<void> {
  const response = await fetch("/login_", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ username, password }),
  });
  if (response.status === 429) {
    const wait = response.headers.get("Retry-After");
    throw new Error(`Too many failed sign-ins: try again in ${wait ?? "a few"} seconds`);
  }
  if (!response.ok) throw new Error(`Sign-in failed: ${await errorText(response)}`);
  const token = (await response.text()).trim();
  set({ credential: token, kind: "session token", who: await whoami(token) }, undefined);
}

export async function signInWithKey(key: string): Promise<void> {
  const credential = key.trim();
  set({ credential, kind: "API key", who: await whoami(credential) }, undefined);
}

/** A REST call of the account routes with the credential (the keys page). */
export async function callAccount(path: string, body: unknown): Promise<unknown> {
  const session = current;
  if (!session) throw new Error("Not signed in");
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${session.credential}` },
    body: JSON.stringify(body),
  });
  if (response.status === 401) {
    const message = await errorText(response);
    signOut(`The API no longer accepts your credential (${message})`);
    throw new Error(message);
  }
  if (!response.ok) throw new Error(await errorText(response));
  return response.json();
}
