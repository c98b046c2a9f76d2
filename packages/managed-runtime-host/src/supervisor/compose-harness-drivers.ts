import {
  CapabilityUnsupportedError,
  type HarnessDriverType,
  InvalidConfigError,
  type SandboxHarnessDriverPort,
} from "@open-managed-agents/runtime-resource-contract";

/**
 * One harness port over several: it offers the union of their lanes and runs each work item on the
 * first port that lists the requested lane. A lane none of them lists is `capability_unsupported`.
 */
export function composeSandboxHarnessDrivers(...drivers: readonly SandboxHarnessDriverPort[]): SandboxHarnessDriverPort {
  if (drivers.length === 0) throw new InvalidConfigError({ message: "composeSandboxHarnessDrivers needs at least one driver", context: { path: "drivers" } });
  return {
    async driverCapabilities(scope) {
      const all = await Promise.all(drivers.map((driver) => driver.driverCapabilities(scope)));
      const lanes = new Set<HarnessDriverType>(all.flatMap((capabilities) => capabilities.drivers));
      return { drivers: [...lanes] };
    },
    async run(input) {
      for (const driver of drivers) {
        const { drivers: lanes } = await driver.driverCapabilities(input.scope);
        if (lanes.includes(input.driver.type)) return driver.run(input);
      }
      throw new CapabilityUnsupportedError({
        message: `no composed harness driver runs the ${input.driver.type} lane`,
        context: { requirement: "harness_driver", driver: input.driver.type },
      });
    },
  };
}
