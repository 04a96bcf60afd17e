import "./styles.css";
import { Provider } from "@urql/preact";
import { render } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { createApiClient } from "./client.ts";
import { CommandsPage } from "./pages/commands.tsx";
import { DevicePage } from "./pages/device.tsx";
import { FleetPage } from "./pages/fleet.tsx";
import { FleetsPage } from "./pages/fleets.tsx";
import { KeysPage } from "./pages/keys.tsx";
import { SignInPage } from "./pages/sign-in.tsx";
import { Layout } from "./parts/layout.tsx";
import { type Route, useRoute } from "./router.ts";
import { currentSession, onSessionChange, type Session } from "./session.ts";

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "fleets":
      return <FleetsPage />;
    case "fleet":
      return <FleetPage id={route.id} />;
    case "device":
      return <DevicePage id={route.id} />;
    case "commands":
      return <CommandsPage fleet={route.fleet} />;
    case "keys":
      return <KeysPage />;
    case "missing":
      return <h1 tabIndex={-1}>No page at {route.path}</h1>;
  }
}

function SignedIn({ session }: { session: Session }) {
  const route = useRoute();
  // One client per credential: signing out closes its WebSocket with it.
  const api = useMemo(() => createApiClient(session), [session]);
  useEffect(() => () => api.dispose(), [api]);
  return (
    <Provider value={api.urql}>
      <Layout session={session} route={route}>
        <Page key={JSON.stringify(route)} route={route} />
      </Layout>
    </Provider>
  );
}

function App() {
  const [session, setSession] = useState(currentSession);
  useEffect(() => onSessionChange((next) => setSession(next)), []);
  return session ? <SignedIn session={session} /> : <SignInPage />;
}

const root = document.getElementById("app");
if (root) render(<App />, root);
