// Hash routes under /console/ (#/fleets/3, #/devices/12, …): a deep link needs nothing of the server
// but index.html, and the fragment never reaches a log.
import { useEffect, useState } from "preact/hooks";

export type Route =
  | { readonly page: "fleets" }
  | { readonly page: "fleet"; readonly id: number }
  | { readonly page: "device"; readonly id: number }
  | { readonly page: "commands"; readonly fleet?: number }
  | { readonly page: "keys" }
  | { readonly page: "missing"; readonly path: string };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, "") || "/fleets";
  const [, first = "", second = "", third = ""] = path.split("/");
  const id = /^\d{1,9}$/.test(second) ? Number(second) : undefined;
  if (first === "fleets" && !second) return { page: "fleets" };
  if (first === "fleets" && id !== undefined && !third) return { page: "fleet", id };
  if (first === "devices" && id !== undefined && !third) return { page: "device", id };
  if (first === "commands") return id === undefined ? { page: "commands" } : { page: "commands", fleet: id };
  if (first === "keys" && !second) return { page: "keys" };
  return { page: "missing", path };
}

/** A link's href to a route (ids are numbers from the API, nothing else goes into a link). */
export const href = {
  fleets: () => "#/fleets",
  fleet: (id: number) => `#/fleets/${Math.trunc(id)}`,
  device: (id: number) => `#/devices/${Math.trunc(id)}`,
  commands: (fleet?: number) => (fleet === undefined ? "#/commands" : `#/commands/${Math.trunc(fleet)}`),
  keys: () => "#/keys",
};

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", changed);
    return () => window.removeEventListener("hashchange", changed);
  }, []);
  return route;
}
