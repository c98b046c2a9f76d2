import {
  CapabilityUnsupportedError,
  type HarnessDriverType,
  type HarnessSupervisorTransportPort,
  type RuntimeProcessDeclaration,
  type SandboxHarnessDriverPort,
  SandboxFailedError,
  createNdjsonSupervisorChannel,
} from "@open-managed-agents/runtime-resource-contract";
import {
  type SandboxDuplexProcess,
  type SandboxDuplexProcessSpec,
  stageCredentialHandoff,
} from "@open-managed-agents/sandbox";
import type { ReferenceWorld } from "./reference-world.js";

const OUTPUT_TAIL = 2_048;

/**
 * The reference harness port: runs the AMA worker process with stdin closed, drains its output and fails
 * with `sandbox_failed` (exit code and output tail in the context) on a non-zero exit.
 */
export function createReferenceHarnessDriver(
  world: ReferenceWorld,
  drivers: readonly HarnessDriverType[],
): SandboxHarnessDriverPort {
  return {
    driverCapabilities: async () => ({ drivers: [...drivers] }),

    async run(input) {
      if (input.driver.type !== "ama_worker" || !drivers.includes("ama_worker")) {
        throw new CapabilityUnsupportedError({
          message: `the reference harness port runs only ama_worker natively, not ${input.driver.type}`,
          context: { driver: input.driver.type },
        });
      }
      const declared = input.driver.process;
      const runtime = await world.connect(input.sandbox);
      // As the drivers do: credentials in a file the bin reads and deletes, not in its environment.
      const handoff = await stageCredentialHandoff(runtime, declared.env);
      const child = await runtime
        .spawnDuplexProcess(
          spawnSpec({ ...declared, ...(handoff.env ? { env: handoff.env } : {}) }),
        )
        .catch(async (error: unknown) => {
          await handoff.discardUnlessRead(null);
          throw error;
        });
      await child.stdin.close().catch(() => undefined);
      const onAbort = (): void => child.kill("SIGKILL");
      input.signal.addEventListener("abort", onAbort, { once: true });
      try {
        const [output, exit] = await Promise.all([drainTail(child), child.exited]);
        await handoff.discardUnlessRead(exit.code);
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

/** The reference supervisor transport: the contract's NDJSON channel over a duplex process's stdin and stdout. */
export function createReferenceSupervisorTransport(
  world: ReferenceWorld,
): HarnessSupervisorTransportPort {
  return {
    async open(input) {
      const runtime = await world.connect(input.sandbox);
      const child = await runtime.spawnDuplexProcess(spawnSpec(input.process));
      const onAbort = (): void => child.kill("SIGKILL");
      input.signal.addEventListener("abort", onAbort, { once: true });
      // stderr is drained so a chatty supervisor never blocks on a full pipe.
      void drain(child.stderr, () => undefined);
      return createNdjsonSupervisorChannel({
        stdin: child.stdin,
        stdout: child.stdout,
        async close() {
          input.signal.removeEventListener("abort", onAbort);
          child.kill("SIGTERM");
          await child.exited;
        },
      });
    },
  };
}

/** The duplex spawn request of a declared process; absent fields stay absent. */
function spawnSpec(declared: RuntimeProcessDeclaration): SandboxDuplexProcessSpec {
  return {
    command: declared.command,
    ...(declared.args ? { args: declared.args } : {}),
    ...(declared.cwd ? { cwd: declared.cwd } : {}),
    ...(declared.env ? { env: declared.env } : {}),
  };
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

async function drain(
  stream: ReadableStream<Uint8Array>,
  onText: (text: string) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  for await (const chunk of stream) onText(decoder.decode(chunk, { stream: true }));
}
