import {
  CapabilityUnsupportedError,
  type HarnessDriverType,
  InvalidConfigError,
  type RuntimeResourceScope,
  type SandboxHarnessDriverPort,
} from "@open-managed-agents/runtime-resource-contract";

/**
 * One harness port over several: it offers the union of their lanes and runs each work item on the one
 * port that lists the requested lane. A lane none of them lists is `capability_unsupported`; a lane two of
 * them list is `invalid_config`, since which one ran an item would then depend on the order of the list.
 */
export function composeSandboxHarnessDrivers(
  ...drivers: readonly SandboxHarnessDriverPort[]
): SandboxHarnessDriverPort {
  if (drivers.length === 0)
    throw new InvalidConfigError({
      message: "composeSandboxHarnessDrivers needs at least one driver",
      context: { path: "drivers" },
    });
  return {
    async driverCapabilities(scope) {
      return { drivers: [...(await laneOwners(drivers, scope)).keys()] };
    },
    async run(input) {
      const owner = (await laneOwners(drivers, input.scope)).get(input.driver.type);
      if (owner) return owner.run(input);
      throw new CapabilityUnsupportedError({
        message: `no composed harness driver runs the ${input.driver.type} lane`,
        context: { requirement: "harness_driver", driver: input.driver.type },
      });
    },
    // Only an ama_worker harness outlives its host (it talks to the platform itself); its owner ends it.
    async endAbandoned(input) {
      const owner = (await laneOwners(drivers, input.scope)).get("ama_worker");
      if (owner?.endAbandoned) return owner.endAbandoned(input);
      throw new CapabilityUnsupportedError({
        message: "no composed harness driver can end an abandoned ama_worker harness",
        context: { requirement: "harness_driver", driver: "ama_worker" },
      });
    },
  };
}

/** Each lane and the one driver that lists it. */
async function laneOwners(
  drivers: readonly SandboxHarnessDriverPort[],
  scope: RuntimeResourceScope,
): Promise<Map<HarnessDriverType, SandboxHarnessDriverPort>> {
  const all = await Promise.all(drivers.map((driver) => driver.driverCapabilities(scope)));
  const owners = new Map<HarnessDriverType, SandboxHarnessDriverPort>();
  const indexes = new Map<HarnessDriverType, number>();
  all.forEach(({ drivers: lanes }, index) => {
    for (const lane of lanes) {
      const first = indexes.get(lane);
      if (first !== undefined) {
        throw new InvalidConfigError({
          message: `composed harness drivers ${first} and ${index} both run the ${lane} lane`,
          context: { path: `drivers.${index}`, driver: lane },
        });
      }
      indexes.set(lane, index);
      owners.set(lane, drivers[index] as SandboxHarnessDriverPort);
    }
  });
  return owners;
}
