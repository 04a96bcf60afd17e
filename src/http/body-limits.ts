import type { FastifyInstance } from "fastify";

const KiB = 1024;

/**
 * The largest request body each route takes (the README's "Operations" lists them); anything
 * larger is a 413 before it is parsed. A route that sets its own limit keeps it (`/graphql`:
 * GRAPHQL_MAX_BODY_BYTES); one that matches none gets the server's limit.
 */
export const bodyLimits: readonly { readonly route: RegExp; readonly bytes: number }[] = [
  // Credentials and key names: a few hundred bytes.
  { route: /^\/(login_|api-key\/|user\/v1\/)/, bytes: 16 * KiB },
  // A device registers with its uuid, name and type.
  { route: /^\/device\/register$/, bytes: 16 * KiB },
  // A supervisor command's data (a host config, environment variables).
  { route: /^\/supervisor\//, bytes: 64 * KiB },
  // State reports (every app and service of the device) and OData writes: the reference API's 512 kB.
  { route: /^\/device\/v[23]\//, bytes: 512 * KiB },
  { route: /^\/v[1-6]\//, bytes: 512 * KiB },
];

/** The server's limit, for any route the table does not name. */
export const DEFAULT_BODY_LIMIT = 512 * KiB;

/** Gives every route registered after it its limit from the table. */
export function useBodyLimits(app: FastifyInstance): void {
  app.addHook("onRoute", (route) => {
    if (route.bodyLimit !== undefined) return;
    const limit = bodyLimits.find((entry) => entry.route.test(route.url))?.bytes;
    if (limit !== undefined) route.bodyLimit = limit;
  });
}
