// Distinct query texts whose parsed documents are kept (most clients send a handful), the longest
// kept (an operation of 300 aliases is some 20 KB), and their characters in all, so the documents
// held stay bounded whatever clients send: a document's AST is some 75 bytes a character of its
// text (5.5 MB for the 85 KB of 2,000 aliases).
export const KEPT_DOCUMENTS = 1_000;
export const MAX_KEPT_QUERY = 128 * 1024;
export const MAX_KEPT_CHARS = 2 * 1024 * 1024;

/**
 * Values by query text within those bounds, the first kept going first: yoga's parser cache
 * (documents, and parse errors) by default keeps 1,024 of any size for an hour, and fresh
 * documents near the field limit then filled the heap by hundreds of MB, whose collection held
 * the event loop for 70–300 ms (issue 45).
 */
export class KeptDocuments<T> {
  private readonly entries = new Map<string, T>();
  private chars = 0;

  get(query: string): T | undefined {
    return this.entries.get(query);
  }

  set(query: string, value: T): void {
    if (query.length > MAX_KEPT_QUERY || this.entries.has(query)) return;
    while (this.entries.size >= KEPT_DOCUMENTS || this.chars + query.length > MAX_KEPT_CHARS) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
      this.chars -= oldest.length;
    }
    this.entries.set(query, value);
    this.chars += query.length;
  }
}
