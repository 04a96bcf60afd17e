import type { ComponentChildren } from "preact";
import { useEffect } from "preact/hooks";
import { href, type Route } from "../router.ts";
import { type Session, signOut } from "../session.ts";

const sections = [
  { page: "fleets", label: "Fleets", link: href.fleets() },
  { page: "commands", label: "Commands", link: href.commands() },
  { page: "keys", label: "API keys", link: href.keys() },
] as const;

function sectionOf(route: Route): string {
  if (route.page === "fleet" || route.page === "device") return "fleets";
  return route.page;
}

export function Layout(props: { session: Session; route: Route; children: ComponentChildren }) {
  const { session, route } = props;
  const current = sectionOf(route);
  // A new page moves the focus to its heading, so a screen reader announces where the user is.
  useEffect(() => {
    const heading = document.querySelector<HTMLElement>("main h1");
    heading?.focus();
  }, [route]);
  return (
    <>
      {/* A button, not a link to #main: the fragment is the route (router.ts). */}
      <button type="button" class="skip" onClick={() => document.getElementById("main")?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <span class="brand">fleetgate</span>
        <nav aria-label="Sections">
          <ul>
            {sections.map((section) => (
              <li key={section.page}>
                <a href={section.link} aria-current={current === section.page ? "page" : undefined}>
                  {section.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">
          Signed in as <strong>{session.who.username}</strong> ({session.kind})
        </span>
        <button type="button" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}
