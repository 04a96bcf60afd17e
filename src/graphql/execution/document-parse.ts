import { type DocumentNode, type FieldNode, GraphQLError, type Source } from "graphql";
// graphql-js's parser class, exported for parsers built on it (graphql 16; the same CommonJS module
// `graphql` itself resolves to, so its nodes and errors are the ones the rest of graphql-js knows).
import { Parser } from "graphql/language/parser.js";
import type { Plugin } from "graphql-yoga";

// Issue 45, item 1: a request's document is parsed with its limits, so a document over them is
// refused while it is parsed, not after a whole AST of it (5.5 MB for the 85 KB of 2,000 aliases,
// kept by the parser cache) has been built. Every parse of a request's document goes through
// yoga's (envelop's) `parse`, which `useDocumentLimits` replaces: the HTTP handler's
// (valid-documents.ts `learn`), yoga's HTTP layer, persisted queries (parsed by their text),
// graphql-ws (ws.ts) and graphql-sse (sse-single-connection.ts).
//
// Two limits, both derived from GRAPHQL_MAX_FIELDS (`maxFields`):
//  - fields: the parser counts the fields it reads, and stops at field `maxFields + 1`. A field
//    written once counts at least once in `fieldsOf` (document-limits.ts: each fragment's fields
//    are counted where defined and again wherever spread), so a document this refuses is one the
//    count after the parse would refuse too, and an allowed document is never refused here;
//  - tokens: at most `maxTokens(maxFields)` = TOKENS_PER_FIELD × maxFields + TOKENS_BESIDE_FIELDS
//    lexical tokens (graphql-js's `maxTokens`; punctuation, names and values count, commas and
//    comments do not). Each field is at least one token (its name), so a document of
//    `maxFields` fields has 31 more tokens a field to spend on its alias, arguments, braces,
//    directives and its share of the fragments and variables, and 1,000 besides: 65,000 tokens
//    at the default of 2,000 fields, which graphql-js parses in some 20 ms (the 2,000 aliases of
//    `devices { deviceTag { id } }` are 18,000). It bounds a parse whatever GRAPHQL_MAX_BODY_BYTES
//    allows (100 KiB holds up to some 100,000 tokens); an allowed document is refused by it only
//    if its arguments and other syntax average more than 31 tokens a field (a `where` with an `in`
//    list of tens of thousands of values).

/** Tokens a document may spend for each field GRAPHQL_MAX_FIELDS allows (see above). */
export const TOKENS_PER_FIELD = 32;
/** Tokens a document may spend besides (operation and fragment headers, variables). */
export const TOKENS_BESIDE_FIELDS = 1_000;

/** The most lexical tokens a document may hold when it may select `maxFields` fields. */
export const maxTokens = (maxFields: number): number => TOKENS_PER_FIELD * maxFields + TOKENS_BESIDE_FIELDS;

/** A refusal of the document, answered as validation errors are (document-limits.ts `refusal`). */
function refusal(message: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code: "BAD_USER_INPUT", http: { status: 400, spec: true } },
  });
}

/** graphql-js's parser, counting the fields it reads and stopping past `maxFields`. */
class LimitedParser extends Parser {
  private fields = 0;

  constructor(
    source: string | Source,
    private readonly maxFields: number,
  ) {
    super(source, { maxTokens: maxTokens(maxFields) });
  }

  override parseField(): FieldNode {
    this.fields += 1;
    if (this.fields > this.maxFields)
      throw refusal(
        `This document selects more than ${this.maxFields} fields, the limit (GRAPHQL_MAX_FIELDS); it was refused at its field ${this.fields}, before the rest was read`,
      );
    return super.parseField();
  }
}

/** Parses a request's document within the limits of `maxFields` (GRAPHQL_MAX_FIELDS). */
export function parseDocument(source: string | Source, maxFields: number): DocumentNode {
  const parser = new LimitedParser(source, maxFields);
  let document: DocumentNode;
  try {
    document = parser.parseDocument();
  } catch (error) {
    // graphql-js's own words ("Document contains more that N tokens") name no setting.
    if (error instanceof GraphQLError && /contains more that \d+ tokens/.test(error.message))
      throw refusal(
        `This document holds more than ${maxTokens(maxFields)} tokens, the limit (${TOKENS_PER_FIELD} for each of the GRAPHQL_MAX_FIELDS fields, and ${TOKENS_BESIDE_FIELDS} more); it was refused before the rest was read`,
      );
    // Values (lists, objects) nested deeper than the parser's recursion goes: the client's document.
    if (error instanceof RangeError)
      throw refusal(
        "This document nests values deeper than the server parses; it was refused before the rest was read",
      );
    throw error;
  }
  // As graphql-js's `parse` does.
  Object.defineProperty(document, "tokenCount", { enumerable: false, value: parser.tokenCount });
  return document;
}

/** Every request document yoga parses is parsed by `parseDocument`. */
export function useDocumentLimits(maxFields: number): Plugin {
  const parse = (source: string | Source) => parseDocument(source, maxFields);
  return {
    onParse({ setParseFn }) {
      setParseFn(parse);
    },
  };
}
