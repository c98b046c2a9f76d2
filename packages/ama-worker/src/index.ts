export { type AmaWorkerConfig, AmaWorkerConfigError, readAmaWorkerConfig } from "./config.js";
export { type RunAmaWorkerItemOptions, runAmaWorkerItem } from "./run.js";
export { AMA_WORKER_BIN, DEFAULT_AMA_WORKER_BIN_DIRECTORY, amaWorkerBinPath, installAmaWorkerBin } from "./install.js";
export { CREDENTIALS_FILE_ENV, takeCredentialsFile } from "./credentials-file.js";
