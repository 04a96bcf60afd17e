import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import type { Config } from "../config.ts";

// What a person who just ran `npm start` at a terminal needs next: where the API and GraphiQL
// are, which database this is, where the admin's password is, and what to run now.

/** How the admin account came to be on this start, as far as the banner needs to know. */
export type AdminOrigin = "generated" | "configured" | "existing";

/** `http://127.0.0.1:3000`: an address anyone on this machine can open, also when listening on all. */
export function baseUrl(address: AddressInfo): string {
  const host =
    address.address === "0.0.0.0" ? "127.0.0.1" : address.address === "::" ? "localhost" : address.address;
  return `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`;
}

/** The database in use, with a PostgreSQL URL's password hidden. */
export function databaseInUse(config: Pick<Config, "DATABASE_URL" | "DATA_DIR">): string {
  if (!config.DATABASE_URL) return `embedded (PGlite), in ${resolve(config.DATA_DIR)}`;
  const url = new URL(config.DATABASE_URL);
  if (url.password) url.password = "***";
  return `PostgreSQL, ${url.href}`;
}

export function startBanner(facts: {
  readonly version: string;
  readonly url: string;
  readonly graphiql: boolean;
  readonly database: string;
  readonly adminUsername: string;
  readonly admin: AdminOrigin;
}): string {
  const password = {
    generated: "its password is printed above, this once",
    configured: "its password is the ADMIN_PASSWORD it was created with",
    existing: "its password was printed when this database first started (or set by ADMIN_PASSWORD then)",
  }[facts.admin];
  const rows = [
    ["API", `${facts.url}/v6/  (OData; POST ${facts.url}/login_ for a token)`],
    facts.graphiql
      ? ["GraphiQL", `${facts.url}/graphql  (open it in a browser)`]
      : ["GraphQL", `${facts.url}/graphql  (GraphiQL is off: GRAPHQL_GRAPHIQL=false)`],
    ["Database", facts.database],
    ["Admin", `'${facts.adminUsername}': ${password}`],
    ["Next", "npm run seed  (in another terminal: demo fleets and devices, user demo / demo-password)"],
  ];
  const lines = rows.map(([label, text]) => `  ${(label ?? "").padEnd(9)} ${text}`);
  return `\n  fleetgate ${facts.version} is ready\n\n${lines.join("\n")}\n\n  Ctrl-C stops it.\n\n`;
}
