/**
 * The second stdio peer: tmcp with `@tmcp/transport-stdio`, written against
 * its public API only.
 *
 * @module
 */

import { StdioTransport } from "@tmcp/transport-stdio";
import { createTmcpServer } from "./tmcp_echo.ts";

new StdioTransport(createTmcpServer()).listen();
