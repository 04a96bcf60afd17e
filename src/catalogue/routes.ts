import type { FastifyInstance, FastifyRequest } from "fastify";
import { asReader, requestContext } from "../auth/request-context.ts";
import type { CatalogueConfig } from "../config.ts";
import type { Executor } from "../db/database.ts";
import { BadRequest, NotFound } from "../errors.ts";
import type { Model } from "../model/types.ts";
import { configVarsDocument } from "./config-vars.ts";
import { configDocument } from "./document.ts";
import { slugPattern } from "./entry.ts";
import { guestPermissions } from "./guest.ts";
import { readEntries } from "./read.ts";

export interface CatalogueDeps {
  readonly db: Executor;
  readonly model: Model;
  readonly config: CatalogueConfig;
}

/** `/config`, `/config/vars` and `/device-types/v1`: no credential needed; private device types only for those who may read them. */
export function catalogueRoutes(app: FastifyInstance, deps: CatalogueDeps): void {
  // The caller's permissions, as the OData routes have them; an invalid credential reads the
  // public catalogue, as none does.
  const permissionsOf = (request: FastifyRequest) => {
    const context = requestContext(request);
    return context.caller ? asReader(context).permissions : guestPermissions;
  };
  const entries = async (request: FastifyRequest, slug?: string) =>
    readEntries(deps.db, deps.model, permissionsOf(request), slug);

  app.get("/config", async (request) => configDocument(deps.config, await entries(request)));

  // balena-sdk's config.getConfigVarSchema: constants, for anyone, as balena serves them.
  app.get<{ Querystring: { deviceType?: unknown } }>("/config/vars", async (request) =>
    configVarsDocument(request.query.deviceType),
  );

  // pinejs wire: a bare array, not a {"d": […]} envelope.
  app.get("/device-types/v1", async (request) => entries(request));

  app.get<{ Params: { slug: string } }>("/device-types/v1/:slug", async (request) => {
    const { slug } = request.params;
    if (!slugPattern.test(slug)) throw new BadRequest("Invalid device type");
    const [entry] = await entries(request, slug);
    if (!entry) throw new NotFound(`Unknown device type ${slug}`);
    return entry;
  });
}
