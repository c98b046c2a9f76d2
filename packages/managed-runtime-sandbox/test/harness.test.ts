import {
  type HarnessSupervisorEvent,
  ManagedRuntimeError,
  type OpenmaSupervisedDriverDeclaration,
} from "@open-managed-agents/runtime-resource-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FENCE_TOKEN,
  amaProfile,
  checkpointPlan,
  fenceFor,
  localWorld,
  scopeFor,
  signal,
} from "./fixtures/world.js";

const scope = scopeFor();
const fence = fenceFor(scope);
const world = localWorld();
let lease: Awaited<ReturnType<typeof world.runtime.sandbox.acquire>>;

beforeAll(async () => {
  const workspace = await world.runtime.workspace.materialize({
    scope,
    fence,
    strategy: "checkpoint_restore",
    activeCheckpoint: null,
    idempotencyKey: "m",
    signal: signal(),
  });
  lease = await world.runtime.sandbox.acquire({
    scope,
    fence,
    plan: checkpointPlan,
    workspace,
    outputs: null,
    credentialEgress: null,
    signal: signal(),
  });
});
afterAll(() => world.runtime.sandbox.terminate({ scope, fence, lease, reason: "completed" }));

const run = (
  script: string,
  options: { env?: Record<string, string>; signal?: AbortSignal } = {},
) =>
  world.runtime.harnessDriver.run({
    scope,
    fence,
    sandbox: lease,
    workspacePath: "/workspace",
    outputPath: null,
    driver: amaProfile("sh", ["-c", script], options.env).driver,
    signal: options.signal ?? signal(),
  });

describe("ama_worker harness driver over the local-subprocess provider", () => {
  it("completes on exit 0 and runs in /workspace with stdin closed", async () => {
    expect(await run('test "$(pwd)" = /workspace && cat && echo done')).toEqual({
      type: "completed",
    });
    expect(await world.runtime.harnessDriver.driverCapabilities(scope)).toEqual({
      drivers: ["ama_worker"],
    });
  });

  it("throws sandbox_failed with the exit code and a redacted, bounded output tail", async () => {
    const secret = "vault-secret-0123456789";
    const script = `head -c 200000 /dev/zero | tr '\\0' x; echo; echo "key=$API_KEY token=${FENCE_TOKEN}"; echo boom >&2; exit 3`;
    const error = await run(script, { env: { API_KEY: secret, DEBUG: "1" } }).catch(
      (caught: unknown) => caught,
    );
    expect(ManagedRuntimeError.hasCode(error, "sandbox_failed")).toBe(true);
    const failure = error as ManagedRuntimeError;
    expect(failure.context).toMatchObject({ exitCode: 3 });
    expect(failure.message).toContain("boom");
    expect(failure.message).toContain("key=[redacted] token=[redacted]");
    expect(failure.message).not.toContain(secret);
    expect(failure.message.length).toBeLessThan(5_000);
  });

  it("stops the process and returns aborted when the signal fires", async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 200);
    expect(await run("sleep 30", { signal: controller.signal })).toEqual({ type: "aborted" });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("refuses the supervised lane with capability_unsupported", async () => {
    const driver: OpenmaSupervisedDriverDeclaration = {
      type: "openma_supervised",
      protocol: "openma-harness-supervisor-v1",
      supervisor: { command: "sh" },
      harness: { id: "h", version: "1" },
      readyTimeoutMs: 1_000,
      heartbeatTimeoutMs: 1_000,
      drainTimeoutMs: 1_000,
    };
    const error = await world.runtime.harnessDriver
      .run({
        scope,
        fence,
        sandbox: lease,
        workspacePath: "/workspace",
        outputPath: null,
        driver,
        signal: signal(),
      })
      .catch((caught: unknown) => caught);
    expect(ManagedRuntimeError.hasCode(error, "capability_unsupported")).toBe(true);
  });
});

describe("supervisor transport over a duplex process", () => {
  it("speaks NDJSON both ways and stops the process on close", async () => {
    const script = [
      `printf '%s\\n' '{"type":"ready","protocol":"openma-harness-supervisor-v1"}'`,
      "read line",
      `case "$line" in *'"type":"drain"'*) printf '%s\\n' '{"type":"drained"}';; *) printf '%s\\n' '{"type":"error","message":"unexpected"}';; esac`,
      "sleep 30",
    ].join("; ");
    const transport = world.runtime.supervisorTransport!;
    const channel = await transport.open({
      scope,
      sandbox: lease,
      process: { command: "sh", args: ["-c", script] },
      signal: signal(),
    });
    const events: HarnessSupervisorEvent[] = [];
    for await (const event of channel.events(signal())) {
      events.push(event);
      if (event.type === "ready") await channel.send({ type: "drain" });
      if (event.type === "drained" || event.type === "error") break;
    }
    expect(events).toEqual([
      { type: "ready", protocol: "openma-harness-supervisor-v1" },
      { type: "drained" },
    ]);
    const closing = Date.now();
    await channel.close();
    expect(Date.now() - closing).toBeLessThan(10_000);
  });
});
