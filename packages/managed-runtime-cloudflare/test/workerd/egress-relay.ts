import type { LocalContainerRuntime } from "@open-managed-agents/local-container/containers-shim";

export function withOutboundRelay(runtime: LocalContainerRuntime, _containerId: string, _env: Record<string, unknown>): LocalContainerRuntime {
  return runtime;
}
