// Telemetry as a Node user wires it: the OpenTelemetry SDK registered as the
// global tracer provider before the server runs, then the telemetry middleware
// of @anubis/telemetry. No propagator is registered, so the middleware
// reads the client's traceparent itself. Prints what the SDK recorded.
// Run as `node dist/otel_check.js`.
import { trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { defineServer } from "@anubis/core";
import { connect } from "@anubis/testing";
import { telemetry } from "@anubis/telemetry";

const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
);

const server = defineServer({
  name: "node-otel",
  version: "1.0.0",
  middleware: [telemetry()],
  tools: [{
    name: "add",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    },
    handler: ({ a, b }: { a: number; b: number }) => String(a + b),
  }],
});

const client = await connect(server);
const result = await client.request("tools/call", {
  name: "add",
  arguments: { a: 2, b: 3 },
  _meta: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
});
client.close();

const span = exporter.getFinishedSpans().find((s) => s.name === "tools/call add");
console.log(JSON.stringify({
  result: (result.content as { text: string }[])[0].text,
  name: span?.name,
  kind: span?.kind,
  traceId: span?.spanContext().traceId,
  parentSpanId: span?.parentSpanContext?.spanId,
  tool: span?.attributes["gen_ai.tool.name"],
  operation: span?.attributes["gen_ai.operation.name"],
}));
