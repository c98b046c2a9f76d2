/** Provisioned size of a container instance type. Decimal strings keep fractions (1/16 vCPU) exact. */
export interface CloudflareInstanceSize {
  readonly vcpu: string;
  /** Memory in GiB. */
  readonly memoryGiB: string;
  /** Disk in GB. */
  readonly diskGB: string;
}

/** Unit prices in USD. */
export interface CloudflareContainerRates {
  /** Per GiB-second of provisioned memory. */
  readonly memoryGiBSecond: string;
  /** Per GB-second of provisioned disk. */
  readonly diskGBSecond: string;
  /** Per vCPU-second of active use. */
  readonly vcpuSecond: string;
}

/** Cloudflare Containers list prices (billed per 10 ms of running time; egress, Workers and Durable Objects are extra). */
export const CLOUDFLARE_CONTAINER_RATES: CloudflareContainerRates = Object.freeze({
  memoryGiBSecond: "0.0000025",
  diskGBSecond: "0.00000007",
  vcpuSecond: "0.000020",
});

/**
 * The named instance types as Cloudflare publishes them. Configuration may replace or extend the table
 * (custom sizes); a deployment should check it against its account.
 */
export const CLOUDFLARE_INSTANCE_TYPES: Readonly<Record<string, CloudflareInstanceSize>> =
  Object.freeze({
    lite: { vcpu: "0.0625", memoryGiB: "0.25", diskGB: "2" },
    basic: { vcpu: "0.25", memoryGiB: "1", diskGB: "4" },
    "standard-1": { vcpu: "0.5", memoryGiB: "4", diskGB: "8" },
    "standard-2": { vcpu: "1", memoryGiB: "6", diskGB: "12" },
    "standard-3": { vcpu: "2", memoryGiB: "8", diskGB: "16" },
    "standard-4": { vcpu: "4", memoryGiB: "12", diskGB: "20" },
  });
