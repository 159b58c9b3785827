/**
 * A read-through view of request headers as the plain lowercased record the
 * engine's `Exchange.headers` expects, without copying them (copying a
 * `Headers` costs more than most of a request's other work).
 *
 * @module
 */

/**
 * Views `Headers` as a `Record<string, string>`: property reads go to
 * `headers.get`, and `Object.keys`, spreading and `in` list every header
 * name, lowercased.
 *
 * @param headers The request headers.
 * @returns The view (read-only).
 *
 * @example
 * ```ts
 * import { headerRecord } from "./_header_record.ts";
 * import assert from "node:assert/strict";
 * const record = headerRecord(new Headers({ Authorization: "Bearer x" }));
 * assert.equal(record.authorization, "Bearer x");
 * assert.deepEqual(Object.keys(record), ["authorization"]);
 * ```
 */
export function headerRecord(headers: Headers): Record<string, string> {
  return new Proxy({ headers }, VIEW) as unknown as Record<string, string>;
}

/** What a view's proxy wraps: the headers, which no trap exposes as a property. */
interface ViewTarget {
  readonly headers: Headers;
}

// One set of traps for every view, so a view costs a target and a proxy.
const VIEW: ProxyHandler<ViewTarget> = {
  get: ({ headers }, name) => typeof name === "string" ? headers.get(name) ?? undefined : undefined,
  has: ({ headers }, name) => typeof name === "string" && headers.has(name),
  ownKeys: ({ headers }) => [...headers.keys()],
  getOwnPropertyDescriptor: ({ headers }, name) => {
    const value = typeof name === "string" ? headers.get(name) : null;
    return value === null
      ? undefined
      : { value, enumerable: true, configurable: true, writable: false };
  },
  set: () => false,
  defineProperty: () => false,
  deleteProperty: () => false,
};
