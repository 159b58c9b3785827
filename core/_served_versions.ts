/**
 * The protocol versions an engine serves: the registry's, restricted by the
 * server's `supportedProtocolVersions`. Checked when the engine is made,
 * because only then is the registry known.
 *
 * @module
 */

/**
 * The versions to serve, newest first (the registry's order).
 *
 * @param known Every version the registry holds, newest first.
 * @param allowed The server's `supportedProtocolVersions`; `undefined` serves all.
 * @returns The served versions.
 * @throws {TypeError} When `allowed` names a version the registry does not
 * know, or names none.
 */
export function servedVersions(
  known: readonly string[],
  allowed: readonly string[] | undefined,
): string[] {
  if (allowed === undefined) return [...known];
  if (!Array.isArray(allowed)) {
    throw new TypeError("supportedProtocolVersions must be an array of version strings");
  }
  const unknown = allowed.filter((version) => !known.includes(version));
  if (unknown.length > 0) {
    throw new TypeError(
      `supportedProtocolVersions names versions the registry does not know: ${
        unknown.map((v) => JSON.stringify(v)).join(", ")
      } (known: ${known.join(", ")})`,
    );
  }
  const served = known.filter((version) => allowed.includes(version));
  if (served.length === 0) {
    throw new TypeError(
      `supportedProtocolVersions is empty: name at least one of ${known.join(", ")}`,
    );
  }
  return served;
}
