/**
 * Cost attribution for Cloudflare Containers from the usage ledger (`sandbox_active_seconds`).
 *
 * @module
 */
export { createCloudflareCostAttribution } from "./cost-attribution.js";
export type { CloudflareCostAttributionOptions } from "./options.js";
export {
  CLOUDFLARE_CONTAINER_RATES,
  CLOUDFLARE_INSTANCE_TYPES,
  type CloudflareContainerRates,
  type CloudflareInstanceSize,
} from "./pricing.js";
