import type { QueryOptions } from "../../core/query.ts";

// Server-driven paging (OData v4 Protocol §8.2.8.3, §11.2.6.7): a client that prefers
// `odata.maxpagesize=N` gets at most N entities and an `@odata.nextLink` to the rest. The next page
// is the same request with `$skip` (and `$top`) moved on, so it is an ordinary read, and the order
// that makes it stable is the planner's (every order ends with the id).

export interface Page {
  readonly size: number;
  readonly skip: number;
  /** The client's own `$top`, which the pages share out. */
  readonly top: number | undefined;
}

/** The page a read of `options` is cut into, when the client set a page size. */
export function pageOf(options: QueryOptions, size: number | undefined): Page | undefined {
  return size === undefined ? undefined : { size, skip: options.skip ?? 0, top: options.top };
}

/**
 * Whether a page is read with one entity more than it holds, to tell whether another page follows:
 * not when the client's own `$top` ends within it.
 */
export const readsOneMore = (page: Page): boolean => page.top === undefined || page.top > page.size;

/** The options that read one page, and one entity more when `readsOneMore`. */
export const pageOptions = (options: QueryOptions, page: Page): QueryOptions => ({
  ...options,
  top: readsOneMore(page) ? page.size + 1 : page.top,
});

/** The URL (after the version) of the page after `page`: `$skip` and `$top` moved on. */
export function nextPageUrl(url: string, page: Page): string {
  const mark = url.indexOf("?");
  const path = mark < 0 ? url : url.slice(0, mark);
  const others = (mark < 0 ? [] : url.slice(mark + 1).split("&")).filter(
    (part) => !/^(?:\$|%24)(?:skip|top)=/i.test(part) && part !== "",
  );
  const moved = [`$skip=${page.skip + page.size}`];
  if (page.top !== undefined) moved.push(`$top=${page.top - page.size}`);
  return `${path}?${[...others, ...moved].join("&")}`;
}
