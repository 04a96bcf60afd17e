import type { ODataQuery } from "../../core/query.ts";
import type { ReadResult, ReadShape } from "../../core/read.ts";
import type { PinejsNegotiation } from "../negotiation.ts";
import type { ResourcePath } from "../path.ts";
import { type Reply, rawValue } from "../reply.ts";
import type { Versions } from "../versions/index.ts";
import { serializePinejs, serializePinejsCount } from "./serialize.ts";

// The pinejs rendering of a read (../read.ts): the query as its version asked it, and the rows or
// the count the statement wrote, under `d`.

/** A parsed query in the core's names (v6): pinejs's links are the core's, so translation is all. */
export const pinejsQuery = (
  parsed: ODataQuery,
  negotiation: PinejsNegotiation,
  names: { readonly versions: Versions },
): ODataQuery => names.versions.toV6(negotiation.version, parsed);

/** The answer to a pinejs read, from what its statement wrote. */
export const pinejsReply = (read: ReadShape, result: ReadResult): Reply =>
  read.kind === "count"
    ? serializePinejsCount(result.count ?? 0)
    : serializePinejs(result.json, result.count);

/**
 * A resource path's answer to a pinejs client, which has paths only to a collection's `/$count`
 * and to a property's raw `$value` (../read-path.ts refuses the others).
 */
export const pinejsPathReply = (answer: ResourcePath["answer"], value: string | null): Reply =>
  answer === "count" ? serializePinejsCount(Number(value)) : rawValue(value, {});
