import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type ConfinedRoot,
  type ConfinementMode,
  type ConfinementNetwork,
  type MountNamespace,
  type PathMounts,
  createConfinedRoot,
  createMountNamespace,
} from "@open-managed-agents/local-confinement";
import { CapabilityUnsupportedError } from "@open-managed-agents/runtime-resource-contract";
import { type FileHelper, createFileHelper } from "./file-helper.js";
import { statPath } from "./file-ops.js";
import FILE_HELPER_PROGRAM from "../programs/file-helper.ts?program";
import type { LocalContainerLimits, PathMapping } from "./options.js";
import { IMAGE_ENV, containerSearchPath } from "./image-env.js";
import type { OutboundRelay } from "./outbound-relay.js";
import { ownerRecord, writeOwner } from "./orphaned-containers.js";
import { CONTAINER_MARKER_ENV, killMarkedProcesses } from "./process-reaper.js";
import { type ProcessTable, createProcessTable } from "./process-table.js";
import { type SessionStore, createSessionStore } from "./sessions.js";
import { ControlApiError } from "./control-api-error.js";

/** Container ids are path segments on the host, so only a safe alphabet is accepted. */
export const CONTAINER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** One local container: a directory tree, its sessions and its processes. */
export interface LocalContainer {
  readonly id: string;
  /** Host directory holding the container's tree. */
  readonly directory: string;
  /** Container path → host directory (normalized). */
  readonly mounts: PathMounts;
  /** The container's mount table, set up once; every command runs through it. Disposed on destroy. */
  readonly namespace: MountNamespace;
  /** Environment every command starts from. */
  readonly baseEnv: Readonly<Record<string, string>>;
  readonly sessions: SessionStore;
  readonly processes: ProcessTable;
  readonly createdAt: Date;
  /** Value of the marker variable every command of this container carries. */
  readonly marker: string;
  /** The configured mapping; `namespace.mode` is the one in use. */
  readonly pathMapping: PathMapping;
  /** The container's confinement; undefined for an `unconfined-unsafe` container. `namespace` is the same object. */
  readonly root: ConfinedRoot | undefined;
  /**
   * The file routes' helper: started on first use inside the confinement (so every path resolves in the
   * container's root, by the kernel), or on the host for an unconfined container. Disposed on destroy.
   */
  readonly files: FileHelper;
  /** Whether its outbound HTTP goes to its Worker (`outbound: "worker"` at start). */
  readonly routed: boolean;
}

/** How a registry runs its containers. */
export interface ContainerRuntimeOptions {
  readonly confinement: ConfinementMode;
  readonly network: ConfinementNetwork;
  readonly egressAllowList?: readonly string[] | undefined;
  /** Where the proxy of a container started with `outbound: "worker"` queues its requests; without it such a start is refused. */
  readonly outboundRelay?: OutboundRelay | undefined;
  /** Used by unconfined containers only. */
  readonly pathMapping: PathMapping;
}

const DEFAULT_RUNTIME: ContainerRuntimeOptions = {
  confinement: "bubblewrap",
  network: "none",
  pathMapping: "auto",
};

/** Host directories a confined root shows as they are on the host (copy-on-write), so a Node there runs inside too. */
const SYSTEM_PREFIXES = ["/usr/", "/opt/", "/bin/", "/sbin/"];
const HELPER_ENV = {
  PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  LANG: "C.UTF-8",
};

/** The file helper of a container: inside its confinement when it has one, otherwise a plain host process. */
function fileHelperFor(root: ConfinedRoot | undefined): FileHelper {
  const args = ["-e", FILE_HELPER_PROGRAM];
  if (root !== undefined) {
    return createFileHelper({
      start: () => root.spawn({ command: process.execPath, args, cwd: "/", env: HELPER_ENV }),
    });
  }
  return createFileHelper({
    start: () => {
      const child = spawn(process.execPath, args, {
        cwd: "/",
        env: HELPER_ENV,
        stdio: ["pipe", "pipe", "pipe"],
      });
      return { child, kill: (signal?: NodeJS.Signals) => child.kill(signal) };
    },
  });
}

/** How one container starts. */
export interface ContainerStartOptions {
  /**
   * `worker`: no network but a proxy whose every plain-HTTP request, and every HTTPS request to a host
   * the Worker intercepts, waits in the outbound relay for the container's Worker to answer (any other
   * `CONNECT` refused; the container trusts the server's egress CA). Needs bubblewrap; refused with `capability_unsupported`
   * otherwise. An existing container keeps the network it started with.
   */
  readonly outbound?: "worker" | undefined;
}

/** The containers of one server. */
export interface ContainerRegistry {
  /** Creates the container unless it exists; at `maxContainers` → 503 `CONTAINER_LIMIT_REACHED`. */
  ensure(
    id: string,
    env?: Readonly<Record<string, string>>,
    start?: ContainerStartOptions,
  ): Promise<{ container: LocalContainer; created: boolean }>;
  get(id: string): LocalContainer | undefined;
  list(): LocalContainer[];
  /** Disposes the container's namespace, kills its process groups with `signal`, waits for them, removes its tree. */
  destroy(id: string, signal?: NodeJS.Signals): Promise<boolean>;
  destroyAll(): Promise<void>;
  /** Last-resort cleanup for process exit: dispose every namespace, SIGKILL every process group and remove every tree, synchronously. */
  destroyAllSync(): void;
}

/** Creates the registry that keeps container trees under `rootDir`. */
export function createContainerRegistry(
  rootDir: string,
  limits: LocalContainerLimits,
  runtime: ContainerRuntimeOptions = DEFAULT_RUNTIME,
): ContainerRegistry {
  const { pathMapping } = runtime;
  const containers = new Map<string, LocalContainer>();
  /** Creates between their limit check and their entry in `containers`. */
  let creating = 0;
  // Tells this server's processes apart from those of another server on the same host.
  const serverId = randomBytes(6).toString("hex");
  const owner = ownerRecord(serverId);
  // Start and destroy of one id run one after another; different ids run in parallel.
  const queues = new Map<string, Promise<unknown>>();
  const serialize = <T>(id: string, task: () => Promise<T>): Promise<T> => {
    const previous = queues.get(id) ?? Promise.resolve();
    const next = previous.then(task, task);
    const settled = next.catch(() => undefined);
    queues.set(id, settled);
    void settled.then(() => {
      if (queues.get(id) === settled) queues.delete(id);
    });
    return next;
  };

  const create = async (
    id: string,
    env: Readonly<Record<string, string>>,
    start: ContainerStartOptions,
  ): Promise<LocalContainer> => {
    const relay = runtime.outboundRelay;
    if (
      start.outbound === "worker" &&
      (runtime.confinement !== "bubblewrap" || relay === undefined)
    ) {
      throw new CapabilityUnsupportedError({
        message:
          'Worker-routed egress needs a confined container (confinement: "bubblewrap"): an unconfined process could go around the proxy',
        context: { confinement: runtime.confinement },
      });
    }
    const directory = join(rootDir, id);
    const mounts = {
      "/workspace": join(directory, "workspace"),
      "/mnt/session/outputs": join(directory, "outputs"),
      "/tmp": join(directory, "tmp"),
    };
    await Promise.all(Object.values(mounts).map((hostDir) => mkdir(hostDir, { recursive: true })));
    await writeOwner(directory, owner);
    await mkdir(join(mounts["/tmp"], "home"), { recursive: true });
    const marker = `${serverId}:${id}`;
    // Commands never see the server's own environment, which may hold keys.
    const baseEnv = {
      ...IMAGE_ENV,
      PATH: containerSearchPath(process.env.PATH),
      HOME: "/tmp/home",
      LANG: "C.UTF-8",
      ...env,
      [CONTAINER_MARKER_ENV]: marker,
    };
    let namespace: MountNamespace;
    let root: ConfinedRoot | undefined;
    try {
      if (runtime.confinement === "bubblewrap") {
        if (!SYSTEM_PREFIXES.some((prefix) => process.execPath.startsWith(prefix))) {
          throw new CapabilityUnsupportedError({
            message: `the file helper runs this Node inside the container, so it must live under /usr or /opt (it is ${process.execPath})`,
            context: { execPath: process.execPath },
          });
        }
        root = await createConfinedRoot({
          tree: directory,
          mounts,
          ...(start.outbound === "worker" && relay !== undefined
            ? {
                network: "none" as const,
                egressHandler: relay.handlerFor(id),
                egressHttps: relay.httpsFor(id),
              }
            : {
                network: runtime.network,
                ...(runtime.egressAllowList === undefined
                  ? {}
                  : { egressAllowList: runtime.egressAllowList }),
              }),
          limits: {
            maxProcesses: limits.maxContainerProcesses,
            maxOpenFiles: limits.maxOpenFiles,
            maxFileBytes: limits.maxFileBytes,
            maxMemoryBytes: limits.maxMemoryBytes,
            maxContainerMemoryBytes: limits.maxContainerMemoryBytes,
            maxCpus: limits.maxContainerCpus,
          },
        });
        namespace = root;
      } else namespace = await createMountNamespace(mounts, { mapping: pathMapping });
    } catch (error) {
      await rm(directory, { recursive: true, force: true });
      throw error;
    }
    const files = fileHelperFor(root);
    // The helper starts before any command of the container runs: a command that exhausts the container's
    // process limit (a fork bomb) must not keep the file routes from starting theirs, as a real container's
    // control server is already running when its first command starts.
    try {
      await statPath(files, "/", false);
    } catch (error) {
      files.dispose();
      namespace.dispose();
      if (root !== undefined) await root.ended;
      await rm(directory, { recursive: true, force: true });
      throw error;
    }
    return {
      id,
      directory,
      mounts: namespace.mounts,
      namespace,
      baseEnv,
      marker,
      pathMapping,
      root,
      files,
      routed: start.outbound === "worker",
      sessions: createSessionStore(baseEnv),
      processes: createProcessTable(limits),
      createdAt: new Date(),
    };
  };

  return {
    ensure(id, env = {}, start = {}) {
      assertContainerId(id);
      return serialize(id, async () => {
        const existing = containers.get(id);
        if (existing !== undefined) return { container: existing, created: false };
        // Check and reserve in one synchronous step: creates of other ids run in parallel, and a check
        // followed by an await let them all pass the limit together.
        if (containers.size + creating >= limits.maxContainers) {
          throw new ControlApiError(
            "CONTAINER_LIMIT_REACHED",
            503,
            `The local container server already runs ${containers.size + creating} containers, its limit`,
            {
              maxContainers: limits.maxContainers,
            },
          );
        }
        creating += 1;
        try {
          const container = await create(id, env, start);
          containers.set(id, container);
          return { container, created: true };
        } finally {
          creating -= 1;
        }
      });
    },
    get(id) {
      return containers.get(id);
    },
    list() {
      return [...containers.values()];
    },
    destroy(id, signal = "SIGKILL") {
      assertContainerId(id);
      return serialize(id, async () => {
        const container = containers.get(id);
        if (container === undefined) return false;
        containers.delete(id);
        runtime.outboundRelay?.drop(id);
        container.files.dispose();
        // No new command enters it; running ones keep the namespace until they exit. A confined
        // container ends only after its commands had their gentle signal: ending it kills the rest.
        if (container.root === undefined) container.namespace.dispose();
        container.sessions.clear();
        container.processes.killAll(signal);
        // A group that ignores a gentle signal is not allowed to keep the tree alive.
        const forced = setTimeout(() => container.processes.killAll("SIGKILL"), 2_000);
        await container.processes.drain();
        clearTimeout(forced);
        if (container.root !== undefined) {
          container.root.dispose();
          await container.root.ended;
        }
        // Members a finished process left behind in its group are found by the marker.
        killMarkedProcesses(container.marker, "SIGKILL");
        await rm(container.directory, { recursive: true, force: true });
        return true;
      });
    },
    async destroyAll() {
      await Promise.all([...containers.keys()].map((id) => this.destroy(id)));
    },
    destroyAllSync() {
      for (const container of containers.values()) {
        container.files.dispose();
        container.namespace.dispose();
        container.processes.killAll("SIGKILL");
        killMarkedProcesses(container.marker, "SIGKILL");
        rmSync(container.directory, { recursive: true, force: true });
      }
      containers.clear();
    },
  };
}

/** Refuses ids that are not safe directory names (400 `INVALID_CONTAINER_ID`). */
export function assertContainerId(id: string): void {
  if (!CONTAINER_ID_PATTERN.test(id)) {
    throw new ControlApiError(
      "INVALID_CONTAINER_ID",
      400,
      "Container id must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$",
      {},
    );
  }
}
