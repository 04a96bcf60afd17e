import type { Permissions } from "../auth/permissions.ts";
import { defaultReadLimits, type ReadLimits } from "../core/limits.ts";
import { readQuery } from "../core/read.ts";
import type { Executor } from "../db/database.ts";
import type { Model } from "../model/types.ts";
import { type NegotiationHeaders, wantsV4 } from "./format.ts";
import { parse } from "./parse/parse.ts";
import { type Reply, serializeCollection, serializeCount } from "./serialize.ts";
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
  const { plan, json, count } = await readQuery(query, {
    ...context,
    format,
    limits: context.limits ?? defaultReadLimits,
  });
  if (plan.kind === "count") return serializeCount(format, count ?? 0);
  const metadataContext = `/${request.version}/$metadata#${asked.resource}`;
  return serializeCollection(format, metadataContext, json, count);
}
