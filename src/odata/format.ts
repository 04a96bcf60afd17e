import type { QueryOptions } from "../core/query.ts";

export interface NegotiationHeaders {
  readonly accept?: string | undefined;
  readonly "odata-version"?: string | undefined;
  readonly "odata-maxversion"?: string | undefined;
}

// A 4.x version number: `4.0`, `4.01`, `4`.
const version4 = /^\s*4(?:\.\d+)?\s*$/;
// A format parameter of OData's JSON format (JSON Format v4.0 §3): odata.metadata, odata.streaming, …
const odataParameter = /;\s*odata\.[a-z]+\s*=/i;

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
 * `$format` as far as negotiation needs it, read from a raw URL: for an answer to a request whose
 * URL may not even parse (its error).
 */
export function formatInUrl(url: string): QueryOptions["format"] {
  const format = new URLSearchParams(url.split("?")[1] ?? "").get("$format");
  const metadata = format === null ? undefined : /odata\.metadata=([^;,]*)/.exec(format)?.[1];
  return metadata === undefined ? undefined : { metadata };
}
