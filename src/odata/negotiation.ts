import type { QueryOptions } from "../core/query.ts";
import { BadRequest } from "../errors.ts";

// What an OData request negotiated, read from its root, headers and `$format` once, before anything
// else reads it: the statement cache's key, the compile step and both renderings (./pinejs/,
// ./v4/) take the one `Negotiation` that `negotiate` resolves, so they cannot disagree.

export interface NegotiationHeaders {
  readonly accept?: string | undefined;
  readonly "odata-version"?: string | undefined;
  readonly "odata-maxversion"?: string | undefined;
  readonly prefer?: string | undefined;
}

/** How much control information a v4 answer carries (OData v4 JSON Format §3.1). */
export type MetadataLevel = "minimal" | "full" | "none";

/** pinejs's wire format: `{"d":[…]}`, links as `{"__id":N}`, no control information and no pages. */
export interface PinejsNegotiation {
  readonly protocol: "pinejs";
  /** The service root from the path: `v1` … `v7`. */
  readonly version: string;
}

/** Standard OData v4 JSON. */
export interface V4Negotiation {
  readonly protocol: "v4";
  /** The service root from the path: `v1` … `v7`, or `odata` (`STANDARD_ROOT`). */
  readonly version: string;
  readonly metadataLevel: MetadataLevel;
  /** The page size the client prefers (`odata.maxpagesize`, ./v4/paging.ts), if any. */
  readonly pageSize: number | undefined;
}

export type Negotiation = PinejsNegotiation | V4Negotiation;

/** What `negotiate` reads of a request. */
export interface NegotiationRequest {
  /** The service root from the path: `v1` … `v7`, or `odata`. */
  readonly version: string;
  /** The rest of the URL as received: `/device(5)?$select=id`. */
  readonly url: string;
  readonly headers: NegotiationHeaders;
}

// A 4.x version number: `4.0`, `4.01`, `4`.
const version4 = /^\s*4(?:\.\d+)?\s*$/;
// A format parameter of OData's JSON format (JSON Format v4.0 §3): odata.metadata, odata.streaming, …
const odataParameter = /;\s*odata\.[a-z]+\s*=/i;
const levels: readonly string[] = ["minimal", "full", "none"];

/**
 * The standard OData v4 service root: the newest model (versions/index.ts), always in OData v4's
 * format, so that a client generated from its `$metadata` needs no header to get what the
 * metadata describes. `/v1`–`/v7` keep pinejs's format unless the client negotiates v4.
 */
export const STANDARD_ROOT = "odata";

/** The service root a URL is under: `v6` of `/v6/device(1)`, `odata` of `/odata/$metadata`. */
export const rootOf = (url: string): string => url.split(/[/?]/, 2)[1] ?? "";

/**
 * Standard OData v4 JSON: always under the standard root; elsewhere when the client asks for it as
 * OData v4 Protocol §8.2 lets it: `OData-MaxVersion: 4.x` (or `OData-Version: 4.x`), an `odata.*`
 * parameter of the JSON format in Accept or in `$format`. pinejs's clients send none of these and
 * keep the pinejs wire format.
 */
export function wantsV4(root: string, headers: NegotiationHeaders, format: QueryOptions["format"]): boolean {
  if (root === STANDARD_ROOT) return true;
  const maxVersion = headers["odata-maxversion"];
  if (maxVersion !== undefined && version4.test(maxVersion)) return true;
  if (headers["odata-version"]?.trim().startsWith("4")) return true;
  if (headers.accept !== undefined && odataParameter.test(headers.accept)) return true;
  return format?.metadata !== undefined;
}

/**
 * `$format` as far as negotiation needs it, read from a raw URL as the parser reads it (the last
 * `$format` counts; OData 4.01 lets `metadata=` go without its `odata.` prefix): before the URL is
 * parsed, which a statement-cache hit skips, and for the answer to a URL that does not parse.
 */
export function formatInUrl(url: string): QueryOptions["format"] {
  const mark = url.indexOf("?");
  const format = mark < 0 ? undefined : new URLSearchParams(url.slice(mark + 1)).getAll("$format").at(-1);
  const metadata = format === undefined ? undefined : /(?:odata\.)?metadata=([^;,]*)/.exec(format)?.[1];
  return metadata === undefined ? undefined : { metadata };
}

/**
 * The level a v4 request asks for: `$format` first, then Accept; `minimal` when neither says. A
 * `$format` level the grammar refuses is left to the parser, which names its position; an Accept
 * level is refused here.
 */
function metadataLevel(headers: NegotiationHeaders, format: QueryOptions["format"]): MetadataLevel {
  const inFormat = format?.metadata?.toLowerCase();
  if (inFormat !== undefined && levels.includes(inFormat)) return inFormat as MetadataLevel;
  const asked = /;\s*odata\.metadata\s*=\s*([A-Za-z]+)/i.exec(headers.accept ?? "")?.[1];
  if (asked === undefined) return "minimal";
  if (!levels.includes(asked.toLowerCase())) {
    throw new BadRequest(`odata.metadata=${asked} is not supported; use minimal, full or none`);
  }
  return asked.toLowerCase() as MetadataLevel;
}

/** The page size a `Prefer` header asks for, if any (OData v4 Protocol §8.2.8.3). */
function maxPageSize(prefer: string | undefined): number | undefined {
  const size = /(?:^|[,;\s])odata\.maxpagesize\s*=\s*(\d+)/i.exec(prefer ?? "")?.[1];
  const value = size === undefined ? undefined : Number(size);
  return value !== undefined && value > 0 && Number.isSafeInteger(value) ? value : undefined;
}

/** The request's format, level and page size: the one place they are read from the request. */
export function negotiate(request: NegotiationRequest): Negotiation {
  const { version, headers } = request;
  const format = formatInUrl(request.url);
  if (!wantsV4(version, headers, format)) return { protocol: "pinejs", version };
  return {
    protocol: "v4",
    version,
    metadataLevel: metadataLevel(headers, format),
    pageSize: maxPageSize(headers.prefer),
  };
}

/** Everything of a negotiation a statement depends on, for a statement cache's key. */
export const negotiationKey = (negotiation: Negotiation): string =>
  negotiation.protocol === "pinejs"
    ? `${negotiation.version} pinejs`
    : `${negotiation.version} v4 ${negotiation.metadataLevel} ${negotiation.pageSize ?? ""}`;
