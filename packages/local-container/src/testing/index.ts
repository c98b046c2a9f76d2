/**
 * Helpers for suites that probe the local container runtime's confinement with hostile commands.
 *
 * @module
 */
export {
  type HostSentinels,
  type PlantHostSentinelsOptions,
  plantHostSentinels,
} from "./host-sentinels.js";
