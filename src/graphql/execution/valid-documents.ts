import type { DocumentNode, GraphQLSchema } from "graphql";
import type { DocumentPlans } from "./document-plans.ts";
import { KEPT_DOCUMENTS, MAX_KEPT_CHARS, MAX_KEPT_QUERY } from "./kept-documents.ts";

/** What learning a document needs of yoga's envelope (yoga.getEnveloped's result). */
interface Enveloped {
  readonly schema: GraphQLSchema;
  parse(query: string): DocumentNode;
  validate(schema: GraphQLSchema, document: DocumentNode): readonly unknown[];
}

/**
 * The documents that parsed and validated, by their text. A query seen before skips envelop's
 * parse and validate steps: their caches hold the same answers (the schema and the rules are the
 * server's), but reaching them runs every plugin's hooks. The first seen go first when it is full,
 * and their plans (document-plans.ts) with them.
 */
export class ValidDocuments {
  private readonly documents = new Map<string, DocumentNode>();
  private keptChars = 0;

  constructor(private readonly plans: DocumentPlans) {}

  /** The document of `query`, if it is kept. */
  get(query: string): DocumentNode | undefined {
    return this.documents.get(query);
  }

  /** The document of a query not seen before, kept if it parses and validates. */
  learn(enveloped: Enveloped, query: string): DocumentNode | undefined {
    let document: DocumentNode;
    try {
      document = enveloped.parse(query);
      if (enveloped.validate(enveloped.schema, document).length > 0) return undefined;
    } catch {
      return undefined;
    }
    if (query.length > MAX_KEPT_QUERY) return document;
    while (this.documents.size >= KEPT_DOCUMENTS || this.keptChars + query.length > MAX_KEPT_CHARS) {
      const [oldest, dropped] = this.documents.entries().next().value as [string, DocumentNode];
      this.documents.delete(oldest);
      this.keptChars -= oldest.length;
      this.plans.forget(dropped);
    }
    this.documents.set(query, document);
    this.keptChars += query.length;
    return document;
  }
}
