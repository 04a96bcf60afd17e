import type { QueryOptions } from "./query.ts";

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
