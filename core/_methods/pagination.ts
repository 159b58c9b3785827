/**
 * Opaque cursors for paginated lists.
 *
 * @module
 */

import { ErrorCode, McpError } from "../errors.ts";

const PREFIX = "o1.";

/**
 * One page of a list.
 *
 * @example
 * ```ts
 * import { paginate } from "./pagination.ts";
 * import assert from "node:assert/strict";
 * const page = paginate(["a", "b", "c"], undefined, 2);
 * assert.deepEqual(page.items, ["a", "b"]);
 * assert.equal(typeof page.nextCursor, "string");
 * ```
 */
export interface Page<T> {
  /** The items of this page. */
  items: T[];
  /** The cursor of the next page, when there is one. */
  nextCursor?: string;
}

/**
 * Cuts a page out of a list. Without a page size the whole list is one page,
 * but a cursor is still validated: a cursor this server did not issue, or one
 * past the end of the list, is `-32602`.
 *
 * @param items The whole list.
 * @param cursor The client's cursor, if any.
 * @param pageSize Items per page; `undefined` for no pagination.
 * @returns The page.
 * @throws {McpError} `-32602` for an invalid cursor.
 *
 * @example
 * ```ts
 * import { paginate } from "./pagination.ts";
 * import assert from "node:assert/strict";
 * const first = paginate([1, 2, 3], undefined, 2);
 * const second = paginate([1, 2, 3], first.nextCursor, 2);
 * assert.deepEqual(second.items, [3]);
 * assert.equal(second.nextCursor, undefined);
 * ```
 */
export function paginate<T>(
  items: readonly T[],
  cursor: string | undefined,
  pageSize: number | undefined,
): Page<T> {
  const offset = cursor === undefined ? 0 : decodeCursor(cursor, items.length);
  if (pageSize === undefined) {
    return { items: offset === 0 ? items as T[] : items.slice(offset) };
  }
  const end = offset + pageSize;
  const page: Page<T> = { items: items.slice(offset, end) };
  if (end < items.length) page.nextCursor = PREFIX + btoa(String(end)).replaceAll("=", "");
  return page;
}

function decodeCursor(cursor: string, length: number): number {
  let offset = NaN;
  if (cursor.startsWith(PREFIX)) {
    try {
      const text = atob(cursor.slice(PREFIX.length));
      if (/^\d{1,9}$/.test(text)) offset = Number(text);
    } catch {
      // Falls through to the error below.
    }
  }
  if (!Number.isInteger(offset) || offset < 1 || offset > length) {
    throw new McpError(ErrorCode.INVALID_PARAMS, "Invalid cursor", { cursor });
  }
  return offset;
}
