/**
 * Small object helpers shared across core.
 *
 * @module
 */

/** Shared by every request that has no headers or assigns; read-only on the frame. */
export const EMPTY: Readonly<Record<string, never>> = Object.freeze({});

/** Copies the defined values of `keys` from `source` onto a new object. */
export function pick(source: object, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const value = (source as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
