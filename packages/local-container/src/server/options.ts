import { tmpdir } from "node:os";
import { resolve, sep } from "node:path";
import type { ConfinementMode, ConfinementNetwork } from "@open-managed-agents/local-confinement";

/**
 * Network of a local container. `none`: a network namespace of its own with only its loopback; its way
 * out is its Worker (Worker-routed egress) or, when an allow-list is given, the host's filtering proxy.
 * `host-unsafe`: the host's network, loopback included, so a command reaches every service of the host
 * (the bridge, a control plane, databases) and every port another container listens on.
 */
export type LocalContainerNetwork = "none" | "host-unsafe";
import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import { confinementOptionFields, limitsSchema } from "./container-options-schema.js";

/** Container mount points a root directory must not lie under (each container also maps `/tmp`, which is fine). */
const REFUSED_ROOT_PARENTS = ["/workspace", "/mnt/session/outputs"] as const;

const LOOPBACK_HOSTS = /^(127(\.\d{1,3}){3}|::1|localhost)$/;

const serverOptionsSchema = z
  .object({
    rootDir: z.string().min(1),
    // Only the stack may reach the server: loopback, and a token on every call.
    host: z
      .string()
      .refine((host) => LOOPBACK_HOSTS.test(host), {
        message:
          "must be a loopback address (127.x.x.x, ::1 or localhost): the server serves its own stack only",
      })
      .default("127.0.0.1"),
    controlToken: z
      .string()
      .min(32, { message: "must be at least 32 characters" })
      .regex(/^[\x21-\x7e]+$/, { message: "must be printable ASCII without spaces" })
      .optional(),
    port: z.number().int().min(0).max(65_535).default(0),
    version: z.string().min(1).default("unknown"),
    pathMapping: z.enum(["auto", "namespace", "rewrite"]).default("auto"),
    ...confinementOptionFields,
    limits: limitsSchema.default(() => limitsSchema.parse({})),
    fileWriteFillDelayMs: z.number().int().min(0).max(60_000).optional(),
  })
  .strict();

/** Environment variable that sets `fileWriteFillDelayMs` when the option is not given. */
export const FILL_DELAY_ENV = "OMA_LOCAL_CONTAINER_WRITE_FILL_DELAY_MS";

/** Bounds the server enforces. */
export interface LocalContainerLimits {
  /** Containers that may exist at once; a start beyond it is refused. @default 16 */
  readonly maxContainers: number;
  /** Commands and background processes running at once in one container. @default 32 */
  readonly maxProcessesPerContainer: number;
  /** Bytes kept per output stream of a buffered command or process, and the largest file `/api/read` returns. @default 16 MiB */
  readonly maxOutputBytes: number;
  /** Largest request body accepted. @default 64 MiB */
  readonly maxBodyBytes: number;
  /**
   * Processes one confined container may have at once (`RLIMIT_NPROC`, counted in the container's own user
   * namespace): a fork bomb stops there. @default 256
   */
  readonly maxContainerProcesses: number;
  /** Open descriptors per confined process (`RLIMIT_NOFILE`). @default 4096 */
  readonly maxOpenFiles: number;
  /** Largest file a confined process may write (`RLIMIT_FSIZE`), in bytes. @default 4 GiB */
  readonly maxFileBytes: number;
  /** Address space of one confined process (`RLIMIT_AS`), in bytes. @default 16 GiB */
  readonly maxMemoryBytes: number;
  /**
   * Memory of all processes of one confined container together (a memory cgroup, swap counted): past it the
   * kernel ends a process of that container, and the server goes on. A container start where the machine
   * gives no memory cgroup → 503 with `capability_unsupported`'s message. @default undefined (no bound)
   */
  readonly maxContainerMemoryBytes?: number | undefined;
  /** CPU of one confined container, in cores (a CPU cgroup's quota); refused like `maxContainerMemoryBytes`. @default undefined (no bound) */
  readonly maxContainerCpus?: number | undefined;
}

/** Options of `createLocalContainerServer`. */
export interface LocalContainerServerOptions {
  /** Directory holding one tree per container. Must not lie under `/workspace` or `/mnt/session/outputs`; `/tmp` is fine. */
  readonly rootDir: string;
  /** Loopback interface to listen on; other addresses are refused. @default "127.0.0.1" */
  readonly host?: string;
  /** Port to listen on; 0 picks a free one. @default 0 */
  readonly port?: number;
  /**
   * The secret every call must carry as `X-Oma-Control-Token: Bearer <token>` (compared in constant time;
   * otherwise 401 `UNAUTHORIZED`). A fresh random one per server when omitted; read it from
   * `server.controlToken` and hand it only to the stack (the Worker's `OMA_LOCAL_CONTAINER_TOKEN` binding).
   */
  readonly controlToken?: string;
  /** Version string `/api/version` reports. @default "unknown" (what the published image reports) */
  readonly version?: string;
  /**
   * How commands see container paths (`@open-managed-agents/local-confinement`): a private mount namespace
   * (root on Linux), literal path rewriting, or `auto` to pick the first that works. @default "auto"
   */
  readonly pathMapping?: PathMapping;
  /**
   * How commands run. `bubblewrap` (the default) confines each container: its own mount, PID, IPC, UTS,
   * user and cgroup namespaces, no capabilities, a copy-on-write root over the host's system directories,
   * rlimits; the server refuses to start (`capability_unsupported`) when bubblewrap or overlayfs is
   * missing. `unconfined-unsafe` runs commands on the host as the server's user with only the sandbox
   * paths mapped: a command can then read and change anything the server can. @default "bubblewrap"
   */
  readonly confinement?: ConfinementMode;
  /**
   * Network of the containers (see {@link LocalContainerNetwork}): `none` is the default of confined
   * containers and needs `bubblewrap`; `host-unsafe` gives up isolation from the host's services and from
   * other containers, and is what an `unconfined-unsafe` container always has. @default "none" ("host-unsafe" unconfined)
   */
  readonly network?: LocalContainerNetwork;
  /**
   * With `network: "none"`: the containers' only way out is a filtering HTTP(S) proxy on the host that lets
   * through these destinations (`host`, `host:port`, `*.domain`; no port = 80 and 443). Commands get
   * `HTTP(S)_PROXY`; one that ignores them has no network at all. Needs `network: "none"`.
   */
  readonly egressAllowList?: readonly string[];
  /**
   * Refuse to start (`capability_unsupported`, naming what to install) unless `bun` is on the containers'
   * PATH, as the sandbox image has it. Without it, a missing bun shows only as `bun: command not found`
   * in the commands that call it. `scripts/bootstrap.sh` installs it. @default false
   */
  readonly requireBun?: boolean;
  readonly limits?: Partial<LocalContainerLimits>;
  /**
   * A file write makes the file full-length first and fills it afterwards, as Cloudflare's container server
   * does; this is the pause between the two, in milliseconds, to widen the window a reader can see zeros in
   * (tests of code that waits for files run with one). @default the `OMA_LOCAL_CONTAINER_WRITE_FILL_DELAY_MS`
   * environment variable, else 0
   */
  readonly fileWriteFillDelayMs?: number;
}

/** Options after validation and defaults. */
export interface ResolvedServerOptions {
  readonly rootDir: string;
  readonly host: string;
  readonly port: number;
  readonly controlToken: string | undefined;
  readonly version: string;
  readonly pathMapping: PathMapping;
  readonly confinement: ConfinementMode;
  readonly network: LocalContainerNetwork;
  readonly egressAllowList: readonly string[] | undefined;
  readonly requireBun: boolean;
  readonly limits: LocalContainerLimits;
  readonly fileWriteFillDelayMs: number;
}

export type { ConfinementMode } from "@open-managed-agents/local-confinement";

/** The confinement's network mode of a {@link LocalContainerNetwork}. */
export function confinementNetworkOf(network: LocalContainerNetwork): ConfinementNetwork {
  return network === "host-unsafe" ? "shared" : "none";
}

/** How commands see container paths (unconfined containers only; confined ones always see literal paths). */
export type PathMapping = "auto" | "namespace" | "rewrite";

/** Validates options once; failure → InvalidConfigError naming the field. */
export function resolveServerOptions(options: LocalContainerServerOptions): ResolvedServerOptions {
  const result = serverOptionsSchema.safeParse(options);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : "(options)";
    throw new InvalidConfigError({
      message: `invalid local container server option ${field}: ${issue?.message ?? "invalid"}`,
      context: { field },
      cause: result.error,
    });
  }
  const rootDir = resolve(result.data.rootDir);
  // Trees under /tmp work in both mapping modes; a tree under /workspace or /mnt/session/outputs would sit
  // inside the very directories the bridge archives and restores.
  const clash = REFUSED_ROOT_PARENTS.find(
    (mountPoint) => rootDir === mountPoint || rootDir.startsWith(`${mountPoint}${sep}`),
  );
  if (clash !== undefined) {
    throw new InvalidConfigError({
      message: `invalid local container server option rootDir: it lies under ${clash}, a path every container maps to its own directory; use a directory elsewhere (for example under ${tmpdir()})`,
      context: { field: "rootDir", mountPoint: clash },
    });
  }
  const { confinement, pathMapping } = result.data;
  const network = result.data.network ?? (confinement === "bubblewrap" ? "none" : "host-unsafe");
  if (confinement === "bubblewrap" && pathMapping === "rewrite") {
    throw new InvalidConfigError({
      message:
        'invalid local container server option pathMapping: "rewrite" runs commands on the host; it needs confinement: "unconfined-unsafe"',
      context: { field: "pathMapping" },
    });
  }
  if (result.data.egressAllowList !== undefined && network !== "none") {
    throw new InvalidConfigError({
      message:
        'invalid local container server option egressAllowList: it needs network: "none" (with the host network a command could go around the proxy)',
      context: { field: "egressAllowList" },
    });
  }
  const { maxContainerMemoryBytes, maxContainerCpus } = result.data.limits;
  if (
    confinement === "unconfined-unsafe" &&
    (maxContainerMemoryBytes !== undefined || maxContainerCpus !== undefined)
  ) {
    const field =
      maxContainerMemoryBytes !== undefined
        ? "limits.maxContainerMemoryBytes"
        : "limits.maxContainerCpus";
    throw new InvalidConfigError({
      message: `invalid local container server option ${field}: a container bound needs confinement: "bubblewrap"`,
      context: { field },
    });
  }
  if (confinement === "unconfined-unsafe" && network === "none") {
    throw new InvalidConfigError({
      message:
        'invalid local container server option network: "none" needs confinement: "bubblewrap"',
      context: { field: "network" },
    });
  }
  return {
    ...result.data,
    network,
    controlToken: result.data.controlToken,
    egressAllowList: result.data.egressAllowList,
    rootDir,
    fileWriteFillDelayMs: result.data.fileWriteFillDelayMs ?? fillDelayFromEnv(),
  };
}

/** The fill delay the environment sets; a value that is not a whole number of milliseconds up to a minute is refused. */
function fillDelayFromEnv(): number {
  const raw = process.env[FILL_DELAY_ENV];
  if (raw === undefined || raw === "") return 0;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0 || value > 60_000) {
    throw new InvalidConfigError({
      message: `invalid ${FILL_DELAY_ENV}: ${JSON.stringify(raw.slice(0, 40))} is not a whole number of milliseconds from 0 to 60000`,
      context: { field: FILL_DELAY_ENV },
    });
  }
  return value;
}
