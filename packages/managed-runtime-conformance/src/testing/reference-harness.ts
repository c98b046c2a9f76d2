import {
  CapabilityUnsupportedError,
  type HarnessDriverType,
  type HarnessSupervisorChannel,
  type HarnessSupervisorTransportPort,
  type SandboxHarnessDriverPort,
  SandboxFailedError,
  parseHarnessSupervisorEvent,
} from "@open-managed-agents/runtime-resource-contract";
import type { SandboxDuplexProcess } from "@open-managed-agents/sandbox";
import type { ReferenceWorld } from "./reference-world.js";

const OUTPUT_TAIL = 2_048;

/**
 * The reference harness port: runs the AMA worker process with stdin closed, drains its output and fails
 * with `sandbox_failed` (exit code and output tail in the context) on a non-zero exit.
 */
export function createReferenceHarnessDriver(world: ReferenceWorld, drivers: readonly HarnessDriverType[]): SandboxHarnessDriverPort {
  return {
    driverCapabilities: async () => ({ drivers: [...drivers] }),

    async run(input) {
      if (input.driver.type !== "ama_worker" || !drivers.includes("ama_worker")) {
        throw new CapabilityUnsupportedError({ message: `the reference harness port runs only ama_worker natively, not ${input.driver.type}`, context: { driver: input.driver.type } });
      }
      const declared = input.driver.process;
      const runtime = await world.connect(input.sandbox);
      const child = await runtime.spawnDuplexProcess({
        command: declared.command,
        ...(declared.args ? { args: declared.args } : {}),
        ...(declared.cwd ? { cwd: declared.cwd } : {}),
        ...(declared.env ? { env: declared.env } : {}),
      });
      await child.stdin.close().catch(() => undefined);
      const onAbort = (): void => child.kill("SIGKILL");
      input.signal.addEventListener("abort", onAbort, { once: true });
      try {
        const [output, exit] = await Promise.all([drainTail(child), child.exited]);
        if (input.signal.aborted) return { type: "aborted" };
        if (exit.code !== 0) {
          throw new SandboxFailedError({
            message: `harness ${declared.command} exited with ${exit.code ?? exit.signal}; output: ${output || "(empty)"}`,
            context: { exitCode: exit.code, signal: exit.signal, output },
          });
        }
        return { type: "completed" };
      } finally {
        input.signal.removeEventListener("abort", onAbort);
      }
    },
  };
}

/** The reference supervisor transport: NDJSON commands on the supervisor's stdin, events from its stdout. */
export function createReferenceSupervisorTransport(world: ReferenceWorld): HarnessSupervisorTransportPort {
  return {
    async open(input) {
      const runtime = await world.connect(input.sandbox);
      const child = await runtime.spawnDuplexProcess({
        command: input.process.command,
        ...(input.process.args ? { args: input.process.args } : {}),
        ...(input.process.cwd ? { cwd: input.process.cwd } : {}),
        ...(input.process.env ? { env: input.process.env } : {}),
      });
      return ndjsonChannel(child, input.signal);
    },
  };
}

function ndjsonChannel(child: SandboxDuplexProcess, signal: AbortSignal): HarnessSupervisorChannel {
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  const onAbort = (): void => child.kill("SIGKILL");
  signal.addEventListener("abort", onAbort, { once: true });
  let closed = false;
  let consumed = false;
  // stderr is drained so a chatty supervisor never blocks on a full pipe.
  void drain(child.stderr, () => undefined);
  return {
    async send(command) {
      if (closed) throw new SandboxFailedError({ message: "supervisor channel is closed", context: { command: command.type } });
      await writer.write(encoder.encode(`${JSON.stringify(command)}\n`));
    },
    async *events(eventSignal) {
      if (consumed) throw new SandboxFailedError({ message: "supervisor events can be read only once" });
      consumed = true;
      for await (const line of lines(child.stdout)) {
        if (eventSignal.aborted) return;
        if (line.trim() === "") continue;
        let payload: unknown;
        try {
          payload = JSON.parse(line);
        } catch (error) {
          throw new SandboxFailedError({ message: "supervisor printed a line that is not JSON", cause: error });
        }
        yield parseHarnessSupervisorEvent(payload, { code: "upstream_protocol" });
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      signal.removeEventListener("abort", onAbort);
      await writer.close().catch(() => undefined);
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}

async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  for await (const chunk of stream) {
    buffered += decoder.decode(chunk, { stream: true });
    let newline = buffered.indexOf("\n");
    while (newline >= 0) {
      yield buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf("\n");
    }
  }
  if (buffered !== "") yield buffered;
}

/** Reads stdout and stderr to the end and keeps the last {@link OUTPUT_TAIL} characters of both. */
async function drainTail(child: Pick<SandboxDuplexProcess, "stdout" | "stderr">): Promise<string> {
  let tail = "";
  const keep = (text: string): void => {
    tail = (tail + text).slice(-OUTPUT_TAIL);
  };
  await Promise.all([drain(child.stdout, keep), drain(child.stderr, keep)]);
  return tail;
}

async function drain(stream: ReadableStream<Uint8Array>, onText: (text: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  for await (const chunk of stream) onText(decoder.decode(chunk, { stream: true }));
}
