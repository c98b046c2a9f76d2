import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import type { UsageLedgerReader } from "../ports.js";
import {
  CLOUDFLARE_CONTAINER_RATES,
  CLOUDFLARE_INSTANCE_TYPES,
  type CloudflareContainerRates,
  type CloudflareInstanceSize,
} from "./pricing.js";

/** Options of {@link createCloudflareCostAttribution}. */
export interface CloudflareCostAttributionOptions {
  /** The usage ledger the Cloudflare driver's recorder writes. */
  readonly ledger: UsageLedgerReader;
  /** Provisioned sizes by instance type. @default {@link CLOUDFLARE_INSTANCE_TYPES} */
  readonly instanceTypes?: Readonly<Record<string, CloudflareInstanceSize>>;
  /** Instance type of usage rows that name none (the container class's `instance_type`). */
  readonly defaultInstanceType?: string;
  /** @default {@link CLOUDFLARE_CONTAINER_RATES} */
  readonly rates?: CloudflareContainerRates;
  /** Provider id of the ledger rows and the report. @default "cloudflare" */
  readonly provider?: string;
}

/** Options after validation. */
export interface ResolvedCloudflareCostOptions {
  readonly ledger: UsageLedgerReader;
  readonly instanceTypes: Readonly<Record<string, CloudflareInstanceSize>>;
  readonly defaultInstanceType: string | null;
  readonly rates: CloudflareContainerRates;
  readonly provider: string;
}

const decimal = z
  .string()
  .regex(/^(?:0|[1-9]\d{0,9})(?:\.\d{1,12})?$/, "must be a non-negative decimal string");
const positiveDecimal = decimal.refine((value) => /[1-9]/.test(value), "must be greater than zero");
const sizeSchema = z
  .object({ vcpu: positiveDecimal, memoryGiB: positiveDecimal, diskGB: positiveDecimal })
  .strict();

const optionsSchema = z
  .object({
    ledger: z.custom<UsageLedgerReader>(
      (value) => typeof (value as { totals?: unknown } | null)?.totals === "function",
      "must be a UsageLedgerReader (totals)",
    ),
    instanceTypes: z.record(z.string().min(1), sizeSchema).optional(),
    defaultInstanceType: z.string().min(1).optional(),
    rates: z
      .object({ memoryGiBSecond: decimal, diskGBSecond: decimal, vcpuSecond: decimal })
      .strict()
      .optional(),
    provider: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((options, context) => {
    const types = options.instanceTypes ?? CLOUDFLARE_INSTANCE_TYPES;
    if (options.defaultInstanceType !== undefined && !(options.defaultInstanceType in types)) {
      context.addIssue({
        code: "custom",
        path: ["defaultInstanceType"],
        message: "must name a configured instance type",
      });
    }
  });

/** Validates options once; a bad option is `invalid_config` naming the field. */
export function resolveCloudflareCostOptions(
  options: CloudflareCostAttributionOptions,
): ResolvedCloudflareCostOptions {
  parseRecord(optionsSchema, options, {
    record: "Cloudflare cost attribution options",
    code: "invalid_config",
  });
  return {
    ledger: options.ledger,
    instanceTypes: options.instanceTypes ?? CLOUDFLARE_INSTANCE_TYPES,
    defaultInstanceType: options.defaultInstanceType ?? null,
    rates: options.rates ?? CLOUDFLARE_CONTAINER_RATES,
    provider: options.provider ?? "cloudflare",
  };
}
