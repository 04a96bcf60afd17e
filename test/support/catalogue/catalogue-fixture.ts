import Fastify, { type FastifyInstance } from "fastify";
import { createUser } from "../../../src/accounts.ts";
import { createApiKey } from "../../../src/auth/api-keys.ts";
import { Authenticator } from "../../../src/auth/caller.ts";
import { signingSecret } from "../../../src/auth/secrets.ts";
import { catalogueRoutes } from "../../../src/catalogue/routes.ts";
import type { CatalogueEntry } from "../../../src/catalogue/schema.ts";
import { catalogueConfigSchema } from "../../../src/config.ts";
import type { Database } from "../../../src/db/database.ts";
import { sendError } from "../../../src/http/errors.ts";
import { useRequestContext } from "../../../src/http/request-context.ts";
import { buildModel } from "../../../src/model/registry.ts";
import { standardOptionGroups } from "./catalogue-options.ts";
import { sampleCatalogue } from "./sample-catalogue.ts";

/** The smallest valid entry: every optional member absent. */
export function minimalEntry(slug: string, state: CatalogueEntry["state"] = "RELEASED"): CatalogueEntry {
  return {
    slug,
    version: 1,
    aliases: [slug],
    name: `Board ${slug}`,
    arch: "aarch64",
    state,
    yocto: {
      machine: slug,
      image: "balena-image",
      fstype: "balenaos-img",
      version: "yocto-kirkstone",
      deployArtifact: "image.img",
    },
    options: standardOptionGroups(state),
  };
}

/** A private device type: only admins (and keys of fleets and devices) read it. */
export const privateEntry: CatalogueEntry = { ...minimalEntry("secret-board"), private: true };

/** A fresh copy of the sample catalogue, safe to change. */
export const sampleCopy = (): CatalogueEntry[] => structuredClone(sampleCatalogue);

/**
 * Only the catalogue's routes, with each request's context (its caller) resolved the way
 * src/server.ts resolves it.
 */
export async function catalogueApp(db: Database, env: Record<string, string> = {}): Promise<FastifyInstance> {
  const app = Fastify();
  app.setErrorHandler(sendError);
  const authenticator = new Authenticator(db, await signingSecret(db, undefined));
  useRequestContext(app, { authenticator, takesNoCaller: () => false });
  catalogueRoutes(app, { db, model: buildModel(), config: catalogueConfigSchema.parse(env) });
  await app.ready();
  return app;
}

/** A user and an API key of theirs. */
export async function userKey(db: Database, username: string, isAdmin: boolean): Promise<string> {
  const id = await createUser(db, buildModel(), {
    username,
    email: `${username}@example.com`,
    password: `${username}-password`,
    isAdmin,
  });
  const user = await db.prisma.user.findUniqueOrThrow({ where: { id } });
  return createApiKey(db, { actor: user.actor, name: "catalogue tests" });
}

/**
 * Sets (or, with `undefined`, deletes) the member at a path written as the errors write it:
 * `[3].options[1].options[0].min`. Tests use it to break one member of a valid file.
 */
export function setAt(root: unknown, path: string, value: unknown): void {
  const keys = [...path.matchAll(/\[(\d+)\]|\.?([^.[\]]+)/g)].map(([, index, name]) =>
    index === undefined ? String(name) : Number(index),
  );
  const last = keys.pop();
  let parent = root as Record<string | number, unknown>;
  for (const key of keys) parent = parent[key] as Record<string | number, unknown>;
  if (last === undefined) throw new Error(`empty path ${path}`);
  if (value === undefined) delete parent[last];
  else parent[last] = value;
}
