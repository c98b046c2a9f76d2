export { type AmaWorkerConfig, AmaWorkerConfigError, readAmaWorkerConfig } from "./config.js";
export { type RunAmaWorkerItemOptions, runAmaWorkerItem } from "./run.js";
export {
  AMA_WORKER_BIN,
  AMA_WORKER_INSTALL_ROOT,
  amaWorkerBinPath,
  amaWorkerBinSha256,
  defaultAmaWorkerBinDirectory,
  installAmaWorkerBin,
} from "./install.js";
export { CREDENTIALS_FILE_ENV, takeCredentialsFile } from "./credentials-file.js";
export { LEASE_HANDOVER_ENV, leaseHandoverFetch } from "./lease-handover.js";
