/**
 * A server whose `connect` tool needs an out-of-band sign-in (URL-mode
 * elicitation, 2025-11-25): the first call of a session is refused with
 * `-32042` naming the sign-in URL; `finish_sign_in`, standing for the sign-in
 * page's callback, marks the session signed in and completes the elicitation
 * through the frame of the refused call (after that request ended), so the
 * client gets `notifications/elicitation/complete` on the session's stream.
 */

import { defineServer, type Frame, urlElicitationRequired } from "@anubis/core";

const signedIn = new Set<string>();
const waiting = new Map<string, { session: string; frame: Frame }>();

export default defineServer({
  name: "url-elicitation",
  version: "1.0.0",
  tools: [
    {
      name: "connect",
      description: "Needs the user signed in (URL elicitation)",
      handler: (_args, frame) => {
        const session = frame.context.sessionId ?? "stdio";
        if (signedIn.has(session)) return "connected";
        const elicitationId = crypto.randomUUID();
        waiting.set(elicitationId, { session, frame });
        throw urlElicitationRequired([{
          elicitationId,
          url: `https://auth.example.com/sign-in?state=${elicitationId}`,
          message: "Sign in to the example service",
        }], "Sign-in required");
      },
    },
    {
      name: "finish_sign_in",
      description: "The sign-in page's callback: completes the elicitation",
      inputSchema: {
        type: "object",
        properties: { elicitationId: { type: "string" } },
        required: ["elicitationId"],
      },
      handler: async ({ elicitationId }) => {
        const pending = waiting.get(elicitationId as string);
        if (!pending) return "unknown elicitation";
        waiting.delete(elicitationId as string);
        signedIn.add(pending.session);
        const sent = await pending.frame.completeElicitation(elicitationId as string);
        return sent ? "completed" : "not sent";
      },
    },
  ],
});
