import type { QueryOptions } from "../core/query.ts";

export interface NegotiationHeaders {
  readonly accept?: string | undefined;
  readonly "odata-version"?: string | undefined;
}

/**
 * Standard OData v4 JSON when the client asks for it (OData-Version: 4.0, or odata.metadata= in
 * Accept or $format); otherwise the pinejs wire format the existing clients expect.
 */
export function wantsV4(headers: NegotiationHeaders, format: QueryOptions["format"]): boolean {
  if (headers["odata-version"]?.trim().startsWith("4")) return true;
  if (headers.accept?.includes("odata.metadata=")) return true;
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
