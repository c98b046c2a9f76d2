import type {
  HarnessRunInput,
  ManagedRuntimeProviderDriverDescriptor,
  ManagedRuntimeProviderDriverPort,
  ManagedRuntimeProviderResources,
} from "@open-managed-agents/runtime-resource-contract";
import type { CaseContext } from "./case-context.js";
import type { ConformanceCaseId } from "./case-catalog.js";
import type { ConformanceSubject } from "./subject.js";

/** How one catalog case runs. */
export interface ConformanceCaseImplementation {
  /** True when the descriptor claims the capability. Core cases always return true. */
  claimed(subject: ConformanceSubject): boolean;
  /** Verifies the claimed behaviour; throws a `ConformanceFailure` (or any error) when it is not there. */
  verify(context: CaseContext): Promise<void>;
  /** Asserts the typed fail-closed error of an unclaimed capability. Absent only for core cases. */
  refuse?(context: CaseContext): Promise<void>;
}

/** The implementation of every case, keyed by id. */
export type ConformanceCaseImplementations = Readonly<
  Record<ConformanceCaseId, ConformanceCaseImplementation>
>;

/** Core cases are claimed by every driver. */
export const always = (): boolean => true;

/** A driver whose descriptor and ports are replaced; used to advertise what the live ports lack. */
export function wrapDriver(
  driver: ManagedRuntimeProviderDriverPort,
  changes: {
    readonly descriptor?: (
      descriptor: ManagedRuntimeProviderDriverDescriptor,
    ) => ManagedRuntimeProviderDriverDescriptor;
    readonly resources?: (
      resources: ManagedRuntimeProviderResources,
    ) => ManagedRuntimeProviderResources;
  },
): ManagedRuntimeProviderDriverPort {
  return {
    descriptor: () =>
      changes.descriptor ? changes.descriptor(driver.descriptor()) : driver.descriptor(),
    async create(input) {
      const resources = await driver.create(input);
      return changes.resources ? changes.resources(resources) : resources;
    },
  };
}

/** The fence-bearing part of a harness input, as the sandbox port methods take it. */
export function leaseInput(input: HarnessRunInput) {
  return { scope: input.scope, fence: input.fence, lease: input.sandbox } as const;
}
