import type { Permissions } from "../auth/permissions.ts";
import type { Executor } from "../db/database.ts";
import type { Model } from "../model/types.ts";
import { type NegotiationHeaders, wantsV4 } from "./format.ts";
import { checkReadLimits, defaultReadLimits, type ReadLimits } from "./limits.ts";
import { parse } from "./parse.ts";
import { planRead } from "./plan.ts";
import { type Reply, serializeCollection, serializeCount } from "./serialize.ts";
import { compileRead } from "./sql/compile.ts";
import type { Versions } from "./versions/index.ts";

export interface ReadContext {
  readonly db: Executor;
  readonly model: Model;
  readonly versions: Versions;
  readonly permissions: Permissions;
  /** The cost and depth limits; `defaultReadLimits` when left out. */
  readonly limits?: ReadLimits;
}

export interface ReadRequest {
  /** The API version from the path: `v1` … `v6`. */
  readonly version: string;
  /** The rest of the URL as received: `/device(5)?$select=id`. */
  readonly url: string;
  readonly headers: NegotiationHeaders;
}

/** An OData GET: parse → translate (to v6) → plan → limits → compile → one statement → serialize. */
export async function read(request: ReadRequest, context: ReadContext): Promise<Reply> {
  const asked = parse(request.url);
  const query = context.versions.toV6(request.version, asked);
  const format = wantsV4(request.headers, query.options.format) ? "v4" : "pinejs";
  const plan = planRead(query, { model: context.model, permissions: context.permissions, format });
  checkReadLimits(plan, context.limits ?? defaultReadLimits);
  const [row] = await context.db.query<{ body?: string; count?: number }>(compileRead(plan));
  if (plan.kind === "count") return serializeCount(format, row?.count ?? 0);
  const metadataContext = `/${request.version}/$metadata#${asked.resource}`;
  return serializeCollection(format, metadataContext, row?.body ?? "[]", row?.count);
}
