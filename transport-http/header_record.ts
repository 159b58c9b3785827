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
 * import { headerRecord } from "@anubis/transport-http";
 * const record = headerRecord(new Headers({ Authorization: "Bearer x" }));
 * console.log(record.authorization, Object.keys(record)); // Bearer x [ "authorization" ]
 * ```
 */
export function headerRecord(headers: Headers): Record<string, string> {
  return new Proxy({} as Record<string, string>, {
    get: (_target, name) => typeof name === "string" ? headers.get(name) ?? undefined : undefined,
    has: (_target, name) => typeof name === "string" && headers.has(name),
    ownKeys: () => [...headers.keys()],
    getOwnPropertyDescriptor: (_target, name) => {
      const value = typeof name === "string" ? headers.get(name) : null;
      return value === null
        ? undefined
        : { value, enumerable: true, configurable: true, writable: false };
    },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
}
