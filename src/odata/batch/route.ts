import type { FastifyInstance } from "fastify";
import { credentialTables } from "../../auth/caller.ts";
import { asReader, requestContext } from "../../auth/request-context.ts";
import { CostBudget, type ReadLimits } from "../../core/limits.ts";
import type { Database } from "../../db/database.ts";
import type { Model } from "../../model/types.ts";
import { V4_HEADERS } from "../v4/serialize.ts";
import type { Versions } from "../versions/index.ts";
import { parseJsonBatch, runJsonBatch } from "./json-batch.ts";
import { parseMultipartBatch, runMultipartBatch } from "./multipart-batch.ts";

/** What the batch route needs of the OData surface's dependencies (http.ts `ODataDeps`). */
export interface BatchDeps {
  readonly db: Database;
  readonly model: Model;
  readonly versions: Versions;
  readonly identitiesChanged: () => void;
  readonly limits: ReadLimits;
  readonly batch: { readonly maxParts: number; readonly maxBytes: number; readonly maxCost: number };
}

/**
 * `POST <root>/$batch` (OData v4.01 Protocol §11.7), in both standard forms: the JSON batch of
 * OData 4.01 and the multipart/mixed batch of OData 4.0. Every request in it runs with the caller of
 * the batch, resolved once: their permissions, their read limits, and the batch's reads together
 * within ODATA_BATCH_MAX_COST. Only the framing differs between the two forms.
 */
export function batchRoute(app: FastifyInstance, url: string, deps: BatchDeps): void {
  const bounds = deps.batch;
  // In a scope of its own, so that no other route takes a multipart/mixed body.
  app.register(async (scope) => {
    scope.addContentTypeParser(
      "multipart/mixed",
      { parseAs: "string", bodyLimit: bounds.maxBytes },
      (_request, body, done) => done(null, body),
    );
    scope.post(url, { bodyLimit: bounds.maxBytes }, async (request, reply) => {
      const limits = { maxParts: bounds.maxParts };
      // The body is a string only where the multipart/mixed parser above took it.
      const multipart = typeof request.body === "string";
      const items = multipart
        ? parseMultipartBatch(request.body as string, request.headers["content-type"] ?? "", limits)
        : undefined;
      const requests = multipart ? undefined : parseJsonBatch(request.body, limits);
      const { caller, permissions } = asReader(requestContext(request));
      const context = {
        db: deps.db,
        model: deps.model,
        versions: deps.versions,
        permissions,
        actor: caller.kind === "anonymous" ? undefined : caller.actor,
        limits: deps.limits,
        budget: new CostBudget(bounds.maxCost),
        origin: `${request.protocol}://${request.host}`,
      };
      if (items) {
        const { boundary, body, tables } = await runMultipartBatch(items, deps.db, context);
        if (tables.some((table) => credentialTables.has(table))) deps.identitiesChanged();
        return reply.type(`multipart/mixed; boundary=${boundary}`).headers(V4_HEADERS).send(body);
      }
      const { responses, tables } = await runJsonBatch(requests ?? [], deps.db, context);
      if (tables.some((table) => credentialTables.has(table))) deps.identitiesChanged();
      return reply.type("application/json").headers(V4_HEADERS).send(JSON.stringify({ responses }));
    });
  });
}
