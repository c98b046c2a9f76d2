import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { allCommandLines } from "./support/processes.js";
import { secretRecordingClient } from "./support/secret-recorder.js";
import { type Stack, amaWorkerProfile, startStack } from "./support/stack.js";

let stack: Stack;
beforeEach(async () => {
  stack = await startStack();
});
afterEach(() => stack.close());

/** Every file under `directory`, as bytes. */
async function filesUnder(directory: string): Promise<Buffer[]> {
  const found: Buffer[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true, recursive: true }).catch(
    () => [],
  )) {
    if (!entry.isFile()) continue;
    const bytes = await readFile(join(entry.parentPath, entry.name)).catch(() => null);
    if (bytes) found.push(bytes);
  }
  return found;
}

const json = (value: unknown) =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner instanceof Error
      ? { name: inner.name, message: inner.message, ...(inner as object) }
      : inner,
  );

it("puts the environment key, work secrets and sessions tokens in no lease, checkpoint, output, record, log, error or command line", async () => {
  // The secrets, as the worker's client sees them on the wire.
  const { client, secrets } = secretRecordingClient(stack);

  // Everything the host's ports answer (leases, checkpoints, candidates, manifests) is kept for the scan.
  const portResults: unknown[] = [];
  const observed = <T extends object>(port: T): T =>
    new Proxy(port, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== "function") return value;
        return async (...args: unknown[]) => {
          const result = await (value as (...input: unknown[]) => unknown).apply(target, args);
          portResults.push(result);
          return result;
        };
      },
    });
  const withOutputs = {
    ...amaWorkerProfile(stack.binDirectory),
    outputs: { requirement: "durable" as const },
  };
  const worker = await stack.worker({
    client,
    profileFor: () => withOutputs,
    host: stack.hostFactory((ports) => ({
      ...ports,
      fences: observed(ports.fences),
      orphans: observed(ports.orphans),
      sandbox: observed(ports.sandbox),
      workspace: observed(ports.workspace),
      outputs: observed(ports.outputs),
    })),
  });

  const session = stack.plane.createSession({ environmentId: stack.environment.id });
  for (let turn = 1; turn <= 2; turn += 1) {
    stack.plane.queueTurn(session.id, {
      toolCalls: [
        {
          name: "bash",
          input: {
            command: `echo turn-${turn} >> /workspace/log && env | cut -d= -f1 | sort > /mnt/session/outputs/env-names-${turn}`,
          },
        },
      ],
    });
  }
  // Sample every process's command line on the machine while the items run.
  const commandLines: string[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      commandLines.push(...(await allCommandLines()));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const controller = new AbortController();
  const running = worker.run(controller.signal);
  await stack.reportsAfter(2);
  controller.abort();
  await running;
  sampling = false;
  await sampler;

  expect(
    stack.reports.map((report) => report.outcome.type === "ran" && report.outcome.result.type),
  ).toEqual(["completed", "completed"]);
  expect(secrets.size).toBeGreaterThanOrEqual(5);
  expect(commandLines.some((line) => line.includes("oma-ama-worker"))).toBe(true);
  const publication = await stack.fences.acquire({
    scope: {
      workspaceId: "ws_test",
      environmentId: stack.environment.id,
      sessionId: session.id,
      workId: "scan",
    },
    ownerId: "scan",
    ttlMs: 1_000,
  });
  const runtimeFiles = await filesUnder(stack.rootDir);
  expect(runtimeFiles.length, "checkpoint archives on disk").toBeGreaterThan(0);
  const haystacks: [string, string | Buffer][] = [
    ["logs", json(stack.logs)],
    ["reports", json(stack.reports)],
    ["port results", json(portResults)],
    ["publication", json(publication)],
    ["orphans", json(await stack.orphans.list({ limit: 100 }))],
    [
      "stored blobs",
      Buffer.concat([...stack.driver.storedBlobs.values()].map((bytes) => Buffer.from(bytes))),
    ],
    ["transcript", json(stack.plane.transcript(session.id))],
    ["command lines", commandLines.join("\n")],
    ...runtimeFiles.map((bytes, index) => [`runtime file ${index}`, bytes] as [string, Buffer]),
  ];
  // The scan sees what it should: checkpoint candidates, and the outputs (the names in the agent's bash env:
  // the SDK's tools do not hand the ANTHROPIC_* credentials on to the agent's commands).
  expect(json(portResults)).toContain("wck_");
  const outputs = Buffer.concat(
    [...stack.driver.storedBlobs.values()].map((bytes) => Buffer.from(bytes)),
  ).toString();
  expect(outputs).toContain("OMA_AMA_MAX_IDLE_MS");
  expect(outputs).not.toContain("ANTHROPIC_WORK_SECRET");
  for (const secret of secrets) {
    const leaks = haystacks
      .filter(([, haystack]) => haystack.includes(secret))
      .map(([name]) => name);
    expect(leaks, "a credential leaked").toEqual([]);
  }
});
