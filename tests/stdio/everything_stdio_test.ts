/**
 * Interop over stdio between `cli serve examples/everything.ts` (a real child
 * process) and the official TypeScript SDK v1 client at each legacy version.
 * The steps are in `everything_sdk_v1.ts`.
 */

import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { serveParams } from "../helpers/stdio_child.ts";
import { connectV1, runV1Steps } from "../helpers/everything_sdk_v1.ts";

for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
  Deno.test(`everything over stdio, SDK v1 client at ${version}`, async (t) => {
    const transport = new StdioClientTransport(serveParams("examples/everything.ts"));
    const connected = await connectV1(transport, version);
    try {
      await runV1Steps(t, version, connected);
    } finally {
      await connected.client.close();
    }
  });
}
