import type { EnvironmentPackagesPort } from "@open-managed-agents/runtime-resource-contract";
import {
  type EnvironmentPackagesInstallerOptions,
  createEnvironmentPackagesInstaller,
} from "@open-managed-agents/environment-packages";
import type { ManagedSandboxRuntime } from "@open-managed-agents/sandbox";
import type { RuntimeRegistry } from "./runtime-registry.js";

/** Dependencies of {@link createProviderEnvironmentPackagesPort}. */
export interface ProviderEnvironmentPackagesDependencies<R extends ManagedSandboxRuntime> {
  readonly registry: RuntimeRegistry<R>;
  readonly installer: EnvironmentPackagesInstallerOptions;
}

/** Installs environment packages through the leased runtime's `exec`; the lease's runtime id is part of the warm marker. */
export function createProviderEnvironmentPackagesPort<R extends ManagedSandboxRuntime>(
  dependencies: ProviderEnvironmentPackagesDependencies<R>,
): EnvironmentPackagesPort {
  const { registry } = dependencies;
  const installer = createEnvironmentPackagesInstaller(dependencies.installer);
  return {
    async install({ scope, sandbox, packages, imageAlias, signal }) {
      const runtime = await registry.resolve(scope, registry.ownLease(sandbox));
      const report = await installer.setup({
        sandbox: runtime,
        packages,
        imageAlias,
        runtimeId: sandbox.runtimeId,
        signal,
      });
      return {
        mode: report.mode,
        skipped: report.skipped,
        pathEntries: report.pathEntries,
        path: report.path,
      };
    },
  };
}
