import * as z from "zod";
import type { LocalContainer } from "./container-registry.js";
import { startCommand } from "./command-runner.js";
import { readJson } from "./request-body.js";
import type { RouteContext } from "./route-context.js";
// Probes run inside the container (its network namespace, whatever the confinement's network mode).
import HTTP_PROBE from "./scripts/probe-http.sh";
import TCP_PROBE from "./scripts/probe-tcp.sh";
import { now, openSse } from "./control-api-responses.js";

/** A probe that has not answered by then counts as not ready (a listener that accepts but never replies). */
const PROBE_DEADLINE_MS = 5_000;

/** The SDK's `PortWatchRequest`, as `Process.waitForPort` sends it. */
const portWatchRequestSchema = z.object({
  port: z.number().int().min(1).max(65_535),
  mode: z.enum(["http", "tcp"]).optional(),
  path: z.string().max(4096).optional(),
  statusMin: z.number().int().optional(),
  statusMax: z.number().int().optional(),
  processId: z.string().min(1).max(256).optional(),
  interval: z.number().optional(),
});
type PortWatchRequest = z.output<typeof portWatchRequestSchema>;

/** `POST /api/port-watch`: SSE `watching`, then `ready`, `process_exited` or `error`, as the published container sends. */
export async function handlePortWatch(context: RouteContext): Promise<void> {
  const body = await readJson(context.request, portWatchRequestSchema, context.limits.maxBodyBytes);
  const { container } = context;
  const interval = Math.max(100, Math.min(body.interval ?? 500, 10_000));
  const sse = openSse(context.response);
  const emit = (event: Record<string, unknown>): Promise<void> =>
    sse.send({ ...event, port: body.port });
  await emit({ type: "watching" });
  try {
    while (!sse.closed) {
      if (body.processId !== undefined) {
        const record = container.processes.get(body.processId);
        if (record === undefined) {
          await emit({ type: "error", error: "Process not found" });
          return;
        }
        if (record.status !== "running") {
          await emit({
            type: "process_exited",
            ...(record.exitCode === undefined ? {} : { exitCode: record.exitCode }),
          });
          return;
        }
      }
      const result = await probe(container, body);
      if (result.ready) {
        await emit({
          type: "ready",
          ...(result.statusCode === undefined ? {} : { statusCode: result.statusCode }),
        });
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, interval));
    }
  } catch (error) {
    await emit({
      type: "error",
      error: error instanceof Error ? error.message : "Unknown error",
      timestamp: now(),
    });
  } finally {
    sse.end();
  }
}

async function probe(
  container: LocalContainer,
  body: PortWatchRequest,
): Promise<{ ready: boolean; statusCode?: number }> {
  const http = (body.mode ?? "http") === "http";
  const script = http ? HTTP_PROBE : TCP_PROBE;
  const mapped = container.processes.launch(() =>
    startCommand(container, {
      command: script,
      cwd: "/",
      env: container.baseEnv,
      args: [String(body.port), body.path ?? "/"],
    }),
  );
  let output = "";
  mapped.child.stdout?.on("data", (chunk: Buffer) => {
    if (output.length < 1024) output += chunk.toString("utf8");
  });
  mapped.child.stderr?.resume();
  const deadline = setTimeout(() => mapped.kill("SIGKILL"), PROBE_DEADLINE_MS);
  const exit = await mapped.exited;
  clearTimeout(deadline);
  if (exit.code !== 0) return { ready: false };
  if (!http) return { ready: true };
  const statusCode = Number(/^HTTP\/\d(?:\.\d)?\s+(\d{3})/.exec(output)?.[1]);
  if (!Number.isInteger(statusCode)) return { ready: false };
  const ready = statusCode >= (body.statusMin ?? 200) && statusCode <= (body.statusMax ?? 399);
  return { ready, statusCode };
}
