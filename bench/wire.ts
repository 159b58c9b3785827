/**
 * The exact messages and headers every benchmark sends: a stateless
 * 2026-07-28 `tools/call` of `echo`, and the legacy 2025-11-25 handshake and
 * call. One place, so every server gets the same bytes.
 *
 * @module
 */

/** The stateless protocol version. */
export const STATELESS_VERSION = "2026-07-28";
/** The legacy protocol version. */
export const LEGACY_VERSION = "2025-11-25";

/** How long any single request of the harness may take before it fails. */
const REQUEST_TIMEOUT_MS = 10_000;

/** The arguments of every `echo` call. */
const ECHO_ARGS = { text: "hi" };

/** Headers every POST carries. */
const POST_HEADERS: Record<string, string> = {
  "content-type": "application/json",
  "accept": "application/json, text/event-stream",
};

/** A request body and the headers that go with it. */
export interface WireRequest {
  /** The JSON-RPC message as JSON text. */
  body: string;
  /** The HTTP headers (lowercase names). */
  headers: Record<string, string>;
  /** Text the result must contain, where a body check knows what to expect. */
  expected?: string;
}

/** What every `echo` call answers. */
const ECHO_TEXT = "echo: hi";

/**
 * A stateless 2026-07-28 `tools/call` of `echo`, with `_meta` and the
 * `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` headers.
 *
 * @param id The JSON-RPC id.
 * @returns The request.
 */
export function statelessCall(id: number | string = 1): WireRequest {
  return {
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: {
        name: "echo",
        arguments: ECHO_ARGS,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1.0.0" },
        },
      },
    }),
    headers: {
      ...POST_HEADERS,
      "mcp-protocol-version": STATELESS_VERSION,
      "mcp-method": "tools/call",
      "mcp-name": "echo",
      ...BEARER,
    },
    expected: ECHO_TEXT,
  };
}

// `BENCH_AUTH_TOKEN` (see servers/anubis_http_auth.ts) adds a bearer token.
const BEARER = ((): Record<string, string> => {
  const token = Deno.env.get("BENCH_AUTH_TOKEN");
  return token ? { authorization: `Bearer ${token}` } : {};
})();

/**
 * A legacy `initialize` request (opens a session over HTTP).
 *
 * @param id The JSON-RPC id.
 * @returns The request.
 */
export function legacyInitialize(id: number | string = 1): WireRequest {
  return {
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "initialize",
      params: {
        protocolVersion: LEGACY_VERSION,
        capabilities: {},
        clientInfo: { name: "bench", version: "1.0.0" },
      },
    }),
    headers: { ...POST_HEADERS },
  };
}

/**
 * The `notifications/initialized` notification of a legacy session.
 *
 * @param sessionId The `Mcp-Session-Id`, when there is one yet.
 * @param version The negotiated protocol version.
 * @returns The request.
 */
export function legacyInitialized(sessionId?: string, version = LEGACY_VERSION): WireRequest {
  return {
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    headers: sessionHeaders(sessionId, version),
  };
}

/**
 * A legacy `tools/call` of `echo` within a session.
 *
 * @param sessionId The `Mcp-Session-Id`.
 * @param version The negotiated protocol version.
 * @param id The JSON-RPC id.
 * @returns The request.
 */
export function legacyCall(
  sessionId: string | undefined,
  version = LEGACY_VERSION,
  id: number | string = 1,
): WireRequest {
  return {
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "echo", arguments: ECHO_ARGS },
    }),
    headers: sessionHeaders(sessionId, version),
    expected: ECHO_TEXT,
  };
}

function sessionHeaders(sessionId: string | undefined, version: string): Record<string, string> {
  const headers: Record<string, string> = { ...POST_HEADERS, "mcp-protocol-version": version };
  if (sessionId) headers["mcp-session-id"] = sessionId;
  return headers;
}

/**
 * Reads a JSON-RPC response from a body that is either JSON or an SSE
 * stream (the last `data:` line holds the response).
 *
 * @param text The response body.
 * @returns The parsed message.
 */
export function parseBody(text: string): Record<string, unknown> {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) return JSON.parse(trimmed);
  const data = trimmed.split("\n").filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim()).filter((line) => line.startsWith("{"));
  if (data.length === 0) throw new Error(`no JSON-RPC message in: ${text.slice(0, 200)}`);
  return JSON.parse(data[data.length - 1]);
}

/**
 * Opens a legacy session over HTTP: `initialize`, then
 * `notifications/initialized`.
 *
 * @param url The MCP endpoint.
 * @returns The session id (absent when the server keeps none) and the
 * negotiated version.
 */
export async function openSession(
  url: string,
): Promise<{ sessionId?: string; version: string }> {
  const init = legacyInitialize();
  const response = await fetch(url, {
    method: "POST",
    headers: init.headers,
    body: init.body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const message = parseBody(await response.text());
  if (!response.ok || !message.result) {
    throw new Error(`initialize failed: ${response.status} ${JSON.stringify(message)}`);
  }
  const sessionId = response.headers.get("mcp-session-id") ?? undefined;
  const version = String((message.result as { protocolVersion?: string }).protocolVersion);
  const done = legacyInitialized(sessionId, version);
  const ack = await fetch(url, {
    method: "POST",
    headers: done.headers,
    body: done.body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  await ack.body?.cancel();
  if (!ack.ok) throw new Error(`notifications/initialized failed: ${ack.status}`);
  return { sessionId, version };
}

/**
 * Sends one request and returns the parsed JSON-RPC response.
 *
 * @param url The MCP endpoint.
 * @param request The request.
 * @returns The HTTP status and the message.
 */
export async function post(
  url: string,
  request: WireRequest,
): Promise<{ status: number; message: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: "POST",
    headers: request.headers,
    body: request.body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return { status: response.status, message: parseBody(await response.text()) };
}
