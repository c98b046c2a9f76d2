import { rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type ConfinedRoot, type ConfinementMode, type ConfinementNetwork, type MountNamespace, type PathMounts, createConfinedRoot, createMountNamespace,
} from "@open-managed-agents/sandbox/local-process";
import type { LocalContainerLimits, PathMapping } from "./options.js";
import { CONTAINER_MARKER_ENV, killMarkedProcesses } from "./process-reaper.js";
import { type ProcessTable, createProcessTable } from "./process-table.js";
import { type SessionStore, createSessionStore } from "./sessions.js";
import { ControlApiError } from "./wire.js";

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
}

/** How a registry runs its containers. */
export interface ContainerRuntimeOptions {
  readonly confinement: ConfinementMode;
  readonly network: ConfinementNetwork;
  readonly egressAllowList?: readonly string[] | undefined;
  /** Used by unconfined containers only. */
  readonly pathMapping: PathMapping;
}

const DEFAULT_RUNTIME: ContainerRuntimeOptions = { confinement: "bubblewrap", network: "shared", pathMapping: "auto" };

/** The containers of one server. */
export interface ContainerRegistry {
  /** Creates the container unless it exists; at `maxContainers` → 503 `CONTAINER_LIMIT_REACHED`. */
  ensure(id: string, env?: Readonly<Record<string, string>>): Promise<{ container: LocalContainer; created: boolean }>;
  get(id: string): LocalContainer | undefined;
  list(): LocalContainer[];
  /** Disposes the container's namespace, kills its process groups with `signal`, waits for them, removes its tree. */
  destroy(id: string, signal?: NodeJS.Signals): Promise<boolean>;
  destroyAll(): Promise<void>;
  /** Last-resort cleanup for process exit: dispose every namespace, SIGKILL every process group and remove every tree, synchronously. */
  destroyAllSync(): void;
}

/** Creates the registry that keeps container trees under `rootDir`. */
export function createContainerRegistry(rootDir: string, limits: LocalContainerLimits, runtime: ContainerRuntimeOptions = DEFAULT_RUNTIME): ContainerRegistry {
  const { pathMapping } = runtime;
  const containers = new Map<string, LocalContainer>();
  // Tells this server's processes apart from those of another server on the same host.
  const serverId = randomBytes(6).toString("hex");
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

  const create = async (id: string, env: Readonly<Record<string, string>>): Promise<LocalContainer> => {
    const directory = join(rootDir, id);
    const mounts = { "/workspace": join(directory, "workspace"), "/mnt/session/outputs": join(directory, "outputs"), "/tmp": join(directory, "tmp") };
    await Promise.all(Object.values(mounts).map((hostDir) => mkdir(hostDir, { recursive: true })));
    await mkdir(join(mounts["/tmp"], "home"), { recursive: true });
    const marker = `${serverId}:${id}`;
    // Commands never see the server's own environment, which may hold keys.
    const baseEnv = {
      PATH: process.env.PATH ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      HOME: "/tmp/home",
      LANG: "C.UTF-8",
      ...env,
      [CONTAINER_MARKER_ENV]: marker,
    };
    let namespace: MountNamespace;
    let root: ConfinedRoot | undefined;
    try {
      if (runtime.confinement === "bubblewrap") {
        root = await createConfinedRoot({
          tree: directory,
          mounts,
          network: runtime.network,
          ...(runtime.egressAllowList === undefined ? {} : { egressAllowList: runtime.egressAllowList }),
          limits: { maxProcesses: limits.maxContainerProcesses, maxOpenFiles: limits.maxOpenFiles, maxFileBytes: limits.maxFileBytes, maxMemoryBytes: limits.maxMemoryBytes },
        });
        namespace = root;
      } else namespace = await createMountNamespace(mounts, { mapping: pathMapping });
    } catch (error) {
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
      sessions: createSessionStore(baseEnv),
      processes: createProcessTable(limits),
      createdAt: new Date(),
    };
  };

  return {
    ensure(id, env = {}) {
      assertContainerId(id);
      return serialize(id, async () => {
        const existing = containers.get(id);
        if (existing !== undefined) return { container: existing, created: false };
        if (containers.size >= limits.maxContainers) {
          throw new ControlApiError("CONTAINER_LIMIT_REACHED", 503, `The local container server already runs ${containers.size} containers, its limit`, {
            maxContainers: limits.maxContainers,
          });
        }
        const container = await create(id, env);
        containers.set(id, container);
        return { container, created: true };
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
        // No new command enters it; running ones keep the namespace until they exit. A confined
        // container ends only after its commands had their gentle signal: ending it kills the rest.
        if (container.root === undefined) container.namespace.dispose();
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
    throw new ControlApiError("INVALID_CONTAINER_ID", 400, "Container id must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$", {});
  }
}
