/** vCPU, memory and disk of a container instance. */
export interface InstanceResources {
  readonly vcpu: number;
  readonly memoryMib: number;
  readonly diskMb: number;
}

/** Cloudflare's predefined container instance types. */
export const NAMED_INSTANCE_TYPES = {
  lite: { vcpu: 1 / 16, memoryMib: 256, diskMb: 2_000 },
  basic: { vcpu: 1 / 4, memoryMib: 1_024, diskMb: 4_000 },
  "standard-1": { vcpu: 1 / 2, memoryMib: 4_096, diskMb: 8_000 },
  "standard-2": { vcpu: 1, memoryMib: 6_144, diskMb: 12_000 },
  "standard-3": { vcpu: 2, memoryMib: 8_192, diskMb: 16_000 },
  "standard-4": { vcpu: 4, memoryMib: 12_288, diskMb: 20_000 },
} as const satisfies Record<string, InstanceResources>;

/** Name of a predefined instance type. */
export type InstanceTypeName = keyof typeof NAMED_INSTANCE_TYPES;

/** Names of the predefined instance types, smallest first. */
export const INSTANCE_TYPE_NAMES = Object.keys(NAMED_INSTANCE_TYPES) as [
  InstanceTypeName,
  ...InstanceTypeName[],
];

/** A predefined instance type by name, or a custom size. */
export type InstanceType = InstanceTypeName | InstanceResources;

/** Bounds Cloudflare puts on custom instance types. */
export const CUSTOM_INSTANCE_LIMITS = {
  minVcpu: 1,
  maxVcpu: 4,
  maxMemoryMib: 12_288,
  maxDiskMb: 20_000,
  minMemoryMibPerVcpu: 3_072,
  maxDiskMbPerMemoryGib: 2_000,
} as const;

/** Explains why a custom size breaks Cloudflare's rules, or returns undefined when it is allowed. */
export function customSizeProblem(size: InstanceResources): string | undefined {
  const limits = CUSTOM_INSTANCE_LIMITS;
  if (size.vcpu < limits.minVcpu || size.vcpu > limits.maxVcpu)
    return `vcpu must be between ${limits.minVcpu} and ${limits.maxVcpu} (smaller sizes: use lite or basic)`;
  if (size.memoryMib > limits.maxMemoryMib)
    return `memoryMib must be at most ${limits.maxMemoryMib} (12 GiB)`;
  if (size.diskMb > limits.maxDiskMb) return `diskMb must be at most ${limits.maxDiskMb} (20 GB)`;
  if (size.memoryMib < size.vcpu * limits.minMemoryMibPerVcpu)
    return `memoryMib must be at least ${limits.minMemoryMibPerVcpu} (3 GiB) per vCPU`;
  if (size.diskMb > (size.memoryMib / 1_024) * limits.maxDiskMbPerMemoryGib)
    return `diskMb must be at most ${limits.maxDiskMbPerMemoryGib} (2 GB) per GiB of memory`;
  return undefined;
}

/** The resources of an instance type. */
export function resourcesOf(type: InstanceType): InstanceResources {
  return typeof type === "string" ? NAMED_INSTANCE_TYPES[type] : type;
}

/** A stable label: the predefined name, or `custom-<vcpu>vcpu-<memory>mib-<disk>mb`. */
export function instanceTypeLabel(type: InstanceType): string {
  return typeof type === "string"
    ? type
    : `custom-${type.vcpu}vcpu-${type.memoryMib}mib-${type.diskMb}mb`;
}

/** True when `offered` has at least the vCPU, memory and disk of `wanted`. */
export function covers(offered: InstanceResources, wanted: InstanceResources): boolean {
  return (
    offered.vcpu >= wanted.vcpu &&
    offered.memoryMib >= wanted.memoryMib &&
    offered.diskMb >= wanted.diskMb
  );
}
