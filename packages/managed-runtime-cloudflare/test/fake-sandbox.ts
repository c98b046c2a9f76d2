/**
 * A `CloudflareSandbox` that records calls, for the option and descriptor tests that never reach a
 * container (the workerd tests use the real Sandbox Durable Object). Every method that would need a
 * container fails loudly, so a test that reaches one by accident cannot pass.
 */
import { SandboxFailedError } from "@open-managed-agents/runtime-resource-contract";
import type { CloudflareSandbox } from "../src/index.js";

export function unreachableSandbox(): CloudflareSandbox {
  const fail = async (): Promise<never> => {
    throw new SandboxFailedError({ message: "this test never reaches a container" });
  };
  return {
    exec: fail,
    startProcess: fail,
    // biome-ignore lint/correctness/useYield: a log stream that fails before its first event.
    async *processLogs() {
      await fail();
    },
    processStatus: fail,
    killProcess: fail,
    readFile: fail,
    writeFile: fail,
    createBackup: fail,
    restoreBackup: fail,
    mountBucket: fail,
    unmountBucket: fail,
    renewActivityTimeout: fail,
    containerState: fail,
    setOutboundHandler: fail,
    destroy: fail,
  };
}
