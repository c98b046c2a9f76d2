/**
 * Local confinement: how a local container runs commands on this machine.
 *
 * `createConfinedRoot` is the boundary: one bubblewrap confinement per container (own mount, PID, IPC,
 * UTS, user and cgroup namespaces, no capabilities, a copy-on-write root over the host's system
 * directories, rlimits and cgroups), which commands enter with `nsenter`. With `network: "none"` the
 * only way out is an egress proxy on the host, which may terminate HTTPS with a CA of the container's own.
 *
 * `spawnMapped` and `createMountNamespace` run commands as local processes that see sandbox paths
 * (`/workspace`, `/mnt/session/outputs`) backed by host directories. They offer NO isolation boundary:
 * the process runs as the current user with the host's network and the rest of the host filesystem.
 * They exist for tests and local stacks. Two ways to map paths, detected once per process and cached:
 * - `namespace`: when running as root on Linux and `unshare` works, processes run in a private mount
 *   namespace where every mount is bind-mounted at its literal sandbox path. Nothing is rewritten.
 *   One namespace is kept per mount table and entered with `nsenter`, so a command costs one
 *   `nsenter` instead of a namespace and a `mount` per directory.
 * - `rewrite`: otherwise, the literal sandbox path prefixes in the command, its arguments, its working
 *   directory and its environment values are rewritten to the host directories, and the mapping is
 *   exported as `OPENMA_PATH_MAP` (JSON object, sandbox path → host directory).
 *
 * Host directories may live anywhere, `/tmp` included, whatever the mount points are.
 * Every process leads its own process group, so {@link MappedProcess.kill} takes the whole tree.
 *
 * @module
 */
export { DEFAULT_SANDBOX_CWD, PATH_MAP_ENV } from "./types.js";
export type {
  MappedCommand,
  MappedProcess,
  PathMappingMode,
  PathMounts,
  SpawnMappedOptions,
} from "./types.js";
export {
  type MapPathOptions,
  mapPath,
  normalizeSandboxPath,
  rewriteSandboxPaths,
} from "./paths.js";
export {
  type CreateMountNamespaceOptions,
  type MountNamespace,
  createMountNamespace,
  detectPathMappingMode,
  spawnMapped,
  toDuplexProcess,
} from "./mount-namespace.js";
export { releaseMountNamespace } from "./namespace-cache.js";
export { type ConfinedRoot, createConfinedRoot } from "./confined-root.js";
export {
  type ConfinedRootOptions,
  type ConfinementMode,
  type ParsedConfinedRootOptions,
  confinedRootOptionsSchema,
} from "./confined-root-options.js";
export {
  type ConfinementLimits,
  type ConfinementNetwork,
  DEFAULT_CONFINEMENT_LIMITS,
} from "./bubblewrap-args.js";
export { assertConfinementAvailable, isConfinementAvailable } from "./availability.js";
export type { EgressHttpHandler, EgressHttpsInterception } from "./egress-proxy.js";
export {
  EGRESS_CA_CERTIFICATE_PATH,
  type EgressCertificateAuthority,
  type EgressCertificateAuthorityOptions,
  createEgressCertificateAuthority,
} from "./egress-ca.js";
export { EGRESS_TLS_ENV, SYSTEM_CA_BUNDLE_PATH } from "./egress-trust.js";
export { type ResolveInRootOptions, resolveInRoot } from "./root-paths.js";
export { type ContainerCgroupLimits, assertContainerCgroupsAvailable } from "./cgroups.js";
