/** An OData read's answer, in whichever format it was negotiated: what the route sends. */
export interface Reply {
  /** 200 unless said: 204 for a null value of a path (OData v4 Protocol §11.2.6). */
  readonly status?: number;
  readonly contentType: string;
  readonly body: string;
  /** `OData-Version: 4.0` on an answer in OData v4's format, as the protocol requires; none in pinejs's. */
  readonly headers: Readonly<Record<string, string>>;
}

/** No value: a null property or to-one navigation at the end of a path (OData v4 Protocol §11.2.6). */
export const noContent = (headers: Readonly<Record<string, string>>): Reply => ({
  status: 204,
  contentType: "text/plain",
  body: "",
  headers,
});

/**
 * A property's raw `$value` (OData v4 URL Conventions §4.6): the same text in either format, but
 * for the headers; no content for null.
 */
export function rawValue(value: string | null, headers: Readonly<Record<string, string>>): Reply {
  if (value === null || value === "null") return noContent(headers);
  const raw = value.startsWith('"') ? (JSON.parse(value) as string) : value;
  return { contentType: "text/plain;charset=utf-8", body: raw, headers };
}
