export { CONFIG_KEYS, type ConfigKey, type ConfigKeyName } from "./config/config-keys.js";
export {
  type ConfigSources,
  type LoadedConfig,
  loadServiceConfig,
  loadStoreUrl,
} from "./config/load-config.js";
export {
  DEFAULT_DRIVER,
  DEFAULT_PROVIDER,
  type ServiceConfig,
  defaultProfile,
  serviceConfigSchema,
} from "./config/schema.js";
export { type CheckResult, formatChecks, runChecks } from "./check.js";
export {
  type ServiceLogger,
  type ServiceLoggerOptions,
  createServiceLogger,
} from "./logging/logger.js";
export { type ServiceMetrics, createServiceMetrics, outcomeLabel } from "./metrics/metrics.js";
export { type RunningService, startService } from "./service/run-service.js";
export { type RuntimeStore, openRuntimeStore } from "./stores/runtime-store.js";
export {
  type FenceRow,
  type OperatorQueries,
  createOperatorQueries,
} from "./stores/operator-queries.js";
