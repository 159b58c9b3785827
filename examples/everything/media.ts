/**
 * The binary fixtures of the everything server, base64 encoded.
 *
 * @module
 */

/**
 * A 1×1 PNG image.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PNG_BASE64 } from "./media.ts";
 * assert.equal(atob(PNG_BASE64).slice(1, 4), "PNG");
 * ```
 */
export const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/**
 * A minimal WAV file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { WAV_BASE64 } from "./media.ts";
 * assert.equal(atob(WAV_BASE64).slice(0, 4), "RIFF");
 * ```
 */
export const WAV_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";
