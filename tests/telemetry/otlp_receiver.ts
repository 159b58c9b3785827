/**
 * A small OTLP/HTTP receiver on loopback (the JSON encoding:
 * `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) that keeps every span and
 * metric data point it is sent, for the telemetry tests.
 *
 * @module
 */

/** An OTLP attribute value, as the JSON encoding writes it. */
type AnyValue = {
  stringValue?: string;
  intValue?: string;
  doubleValue?: number;
  boolValue?: boolean;
};
type KeyValue = { key: string; value: AnyValue };

/** A received span, its attributes flattened. */
export interface ReceivedSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  status: { code?: number; message?: string };
  scope: string;
}

/** A received histogram data point, with its metric's name and unit. */
export interface ReceivedPoint {
  metric: string;
  unit: string;
  attributes: Record<string, unknown>;
  count: number;
  explicitBounds: number[];
}

/** The receiver. */
export interface OtlpReceiver {
  /** The endpoint to give `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  url: string;
  spans: ReceivedSpan[];
  points: ReceivedPoint[];
  /** Waits (bounded) until `done()` holds; throws with `what` otherwise. */
  until(done: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const valueOf = (value: AnyValue): unknown =>
  value.stringValue ?? value.boolValue ?? value.doubleValue ??
    (value.intValue === undefined ? undefined : Number(value.intValue));

const flatten = (list: KeyValue[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));

/** Starts a receiver on a free port of 127.0.0.1. */
export function startOtlpReceiver(): OtlpReceiver {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    // deno-lint-ignore no-explicit-any
    const body: any = await req.json().catch(() => ({}));
    if (path === "/v1/traces") {
      for (const resource of body.resourceSpans ?? []) {
        for (const scoped of resource.scopeSpans ?? []) {
          for (const span of scoped.spans ?? []) {
            spans.push({
              name: span.name,
              kind: span.kind,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? "",
              attributes: flatten(span.attributes),
              links: (span.links ?? []).map((l: ReceivedSpan["links"][0]) => ({
                traceId: l.traceId,
                spanId: l.spanId,
              })),
              status: span.status ?? {},
              scope: scoped.scope?.name ?? "",
            });
          }
        }
      }
    } else if (path === "/v1/metrics") {
      for (const resource of body.resourceMetrics ?? []) {
        for (const scoped of resource.scopeMetrics ?? []) {
          for (const metric of scoped.metrics ?? []) {
            for (const point of metric.histogram?.dataPoints ?? []) {
              points.push({
                metric: metric.name,
                unit: metric.unit,
                attributes: flatten(point.attributes),
                count: Number(point.count),
                explicitBounds: point.explicitBounds ?? [],
              });
            }
          }
        }
      }
    }
    return Response.json({});
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    spans,
    points,
    async until(done, what, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done()) {
        if (Date.now() > deadline) {
          throw new Error(
            `${what} never arrived; spans: ${spans.map((s) => s.name).join(", ")}; metrics: ${
              [...new Set(points.map((p) => p.metric))].join(", ")
            }`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => server.shutdown(),
  };
}

/** The environment that turns Deno's OpenTelemetry on, exporting to `receiver`. */
export function otelEnv(receiver: OtlpReceiver): Record<string, string> {
  return {
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_SERVICE_NAME: "anubis-telemetry-test",
    OTEL_METRIC_EXPORT_INTERVAL: "200",
    OTEL_BSP_SCHEDULE_DELAY: "50",
  };
}
