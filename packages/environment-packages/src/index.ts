export {
  type EnvironmentPackagesInstaller,
  type EnvironmentSetupInput,
  type EnvironmentSetupReport,
  createEnvironmentPackagesInstaller,
} from "./installer.js";
export {
  DEFAULT_TOOL_ROOT,
  type EnvironmentPackagesInstallerOptions,
  type NpmRegistryOptions,
  type PipIndexOptions,
  RESTORED_MARKER_PATH,
  WARM_MARKER_PATH,
} from "./options.js";
export { setupFingerprint } from "./markers.js";
