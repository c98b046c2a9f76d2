export {
  ADMIN_PREFIX,
  CONTAINER_ID_HEADER,
  CONTAINER_STATE_HEADER,
  CONTROL_PORT,
} from "./protocol.js";
export { type LocalContainerServer, createLocalContainerServer } from "./server/server.js";
export type {
  ConfinementMode,
  LocalContainerLimits,
  LocalContainerNetwork,
  LocalContainerServerOptions,
  PathMapping,
} from "./server/options.js";
export { FILL_DELAY_ENV } from "./server/options.js";
export type { LocalContainer } from "./server/container-registry.js";
export {
  type LocalBridge,
  defaultBridgeWorkerPath,
  startLocalBridge,
} from "./launcher/start-local-bridge.js";
export type { StartLocalBridgeOptions } from "./launcher/launcher-options.js";
