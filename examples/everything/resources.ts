/**
 * The everything server's resources: static text and binary resources, a
 * watched resource clients may subscribe to, and a URI template.
 *
 * @module
 */

import type { ResourceDefinition, ResourceTemplateDefinition, ToolDefinition } from "@anubis/core";
import { PNG_BASE64 } from "./media.ts";

const WATCHED_URI = "test://watched-resource";
let watchedRevision = 1;

/**
 * The fixed resources, readable one first (the `caching` scenario reads the
 * first URI listed).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resources } from "./resources.ts";
 * assert.equal(resources[0].uri, "test://static-text");
 * ```
 */
export const resources: ResourceDefinition[] = [
  {
    uri: "test://static-text",
    name: "static-text",
    title: "Static Text Resource",
    description: "A static text resource for testing",
    mimeType: "text/plain",
    // A string is text contents with the resource's URI and media type.
    read: () => "This is the content of the static text resource.",
  },
  {
    uri: "test://static-binary",
    name: "static-binary",
    title: "Static Binary Resource",
    description: "A static binary resource (image) for testing",
    mimeType: "image/png",
    read: (uri) => ({ uri, mimeType: "image/png", blob: PNG_BASE64 }),
  },
  {
    uri: WATCHED_URI,
    name: "watched-resource",
    title: "Watched Resource",
    description: "A resource that changes when test_trigger_resource_update runs",
    mimeType: "text/plain",
    read: () =>
      watchedRevision === 1
        ? "Watched resource content"
        : `Watched resource content (revision ${watchedRevision})`,
  },
];

/**
 * `test://template/{id}/data`, with completion of `id`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resourceTemplates } from "./resources.ts";
 * assert.equal(resourceTemplates[0].uriTemplate, "test://template/{id}/data");
 * ```
 */
export const resourceTemplates: ResourceTemplateDefinition[] = [{
  uriTemplate: "test://template/{id}/data",
  name: "template",
  title: "Resource Template",
  description: "A resource template with parameter substitution",
  mimeType: "application/json",
  complete: { id: (value) => ["123", "456", "789"].filter((id) => id.startsWith(value)) },
  read: (uri, { id }) => ({
    uri,
    mimeType: "application/json",
    text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
  }),
}];

/**
 * `test_trigger_resource_update`: changes the watched resource and tells its
 * subscribers (`notifications/resources/updated`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resourceTools } from "./resources.ts";
 * assert.equal(resourceTools[0].name, "test_trigger_resource_update");
 * ```
 */
export const resourceTools: ToolDefinition<never>[] = [{
  name: "test_trigger_resource_update",
  description: "Changes test://watched-resource and notifies its subscribers",
  handler: (_args, frame) => {
    watchedRevision++;
    frame.notify.resourceUpdated(WATCHED_URI);
    return `${WATCHED_URI} is now at revision ${watchedRevision}`;
  },
}];
