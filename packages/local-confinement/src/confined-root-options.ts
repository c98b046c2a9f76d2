import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";
import {
  type ConfinementLimits,
  type ConfinementNetwork,
  DEFAULT_CONFINEMENT_LIMITS,
} from "./bubblewrap-args.js";
import type { EgressCertificateAuthority } from "./egress-ca.js";
import type { EgressHttpHandler, EgressHttpsInterception, EgressPolicy } from "./egress-proxy.js";
import type { PathMounts } from "./types.js";

/**
 * How commands of a local container run: `bubblewrap` confines them (own mount, PID, IPC, UTS, user and
 * cgroup namespaces, no capabilities, a copy-on-write root); `unconfined-unsafe` runs them on the host as
 * the server's user, with only the sandbox paths mapped. The unsafe mode is never a default.
 */
export type ConfinementMode = "bubblewrap" | "unconfined-unsafe";

const positiveInteger = z.number().int().positive();
const positiveBound = z.number().positive().finite();
const isFunction = (value: unknown): boolean => typeof value === "function";

const limitsSchema = z
  .object({
    maxProcesses: positiveInteger.optional(),
    maxOpenFiles: positiveInteger.optional(),
    maxFileBytes: positiveInteger.optional(),
    maxMemoryBytes: positiveInteger.optional(),
    maxContainerMemoryBytes: positiveBound.optional(),
    maxCpus: positiveBound.optional(),
  })
  .strict();

// Kept by reference, not copied: the proxy calls them as the caller's own objects.
const authoritySchema = z.custom<EgressCertificateAuthority>(
  (value) =>
    typeof (value as EgressCertificateAuthority | null)?.certificatePem === "string" &&
    isFunction((value as EgressCertificateAuthority).secureContextFor),
  "must be an egress certificate authority",
);
const interceptionSchema = z.custom<EgressHttpsInterception>(
  (value) =>
    authoritySchema.safeParse((value as EgressHttpsInterception | null)?.authority).success &&
    isFunction((value as EgressHttpsInterception).intercepts),
  "must be { authority, intercepts(host, port) }",
);

/** The options of {@link createConfinedRoot}, checked once; cross-field rules name the field they refuse. */
export const confinedRootOptionsSchema = z
  .object({
    /** The container's host directory; its root's own files (`rootfs`, `upper`, `work`) are created in it. */
    tree: z.string().min(1),
    /** Container path → existing host directory bound over the root (`/workspace`, `/tmp`, …). */
    mounts: z.record(z.string(), z.string()),
    network: z.enum(["shared", "none"]).default("shared"),
    limits: limitsSchema.default({}),
    hostname: z.string().min(1).max(64).default("sandbox"),
    egressAllowList: z.array(z.string()).readonly().optional(),
    egressHandler: z.custom<EgressHttpHandler>(isFunction, "must be a function").optional(),
    egressHttps: interceptionSchema.optional(),
  })
  .strict()
  .superRefine((options, context) => {
    const refuse = (field: string, message: string): void =>
      context.addIssue({ code: "custom", path: [field], message });
    if (options.egressAllowList !== undefined && options.egressHandler !== undefined) {
      refuse("egressHandler", "egressAllowList and egressHandler exclude each other");
    }
    if (options.egressHttps !== undefined && options.egressHandler === undefined) {
      refuse("egressHttps", "egressHttps needs egressHandler: the intercepted requests go to it");
    }
    const field = options.egressHandler !== undefined ? "egressHandler" : "egressAllowList";
    if (options[field] !== undefined && options.network !== "none") {
      refuse(
        field,
        `${field} needs network: "none": with the host network a command could go around the proxy`,
      );
    }
  })
  .transform((options) => ({
    ...options,
    limits: { ...DEFAULT_CONFINEMENT_LIMITS, ...options.limits } satisfies ConfinementLimits,
    egressPolicy: egressPolicyOf(options),
  }));

/** Options of {@link createConfinedRoot}. */
export interface ConfinedRootOptions {
  /** The container's host directory; its root's own files (`rootfs`, `upper`, `work`) are created in it. */
  readonly tree: string;
  /** Container path → existing host directory bound over the root (`/workspace`, `/tmp`, …). */
  readonly mounts: PathMounts;
  /** @default "shared" */
  readonly network?: ConfinementNetwork;
  readonly limits?: Partial<ConfinementLimits>;
  /** Host name inside the container. @default "sandbox" */
  readonly hostname?: string;
  /**
   * With `network: "none"`: the only way out is a filtering HTTP(S) proxy on the host that lets through
   * these destinations (`host`, `host:port`, `*.domain`; no port = 80 and 443). Commands get
   * `HTTP(S)_PROXY` pointing at it; a command that ignores them has no network at all.
   */
  readonly egressAllowList?: readonly string[];
  /**
   * With `network: "none"`, instead of `egressAllowList`: the proxy hands every plain-HTTP request to this
   * handler and refuses every `CONNECT` (403) but those `egressHttps` intercepts. Commands get
   * `HTTP(S)_PROXY` as with an allow-list.
   */
  readonly egressHandler?: EgressHttpHandler;
  /**
   * With `egressHandler`: the HTTPS the proxy terminates and hands to the handler. The container's own
   * copy of `/etc` gets the CA certificate (never its key) and commands get `NODE_EXTRA_CA_CERTS`,
   * `SSL_CERT_FILE` and `REQUESTS_CA_BUNDLE` pointing at it.
   */
  readonly egressHttps?: EgressHttpsInterception;
}

/** {@link ConfinedRootOptions} with defaults filled in and the egress policy resolved. */
export type ParsedConfinedRootOptions = z.output<typeof confinedRootOptionsSchema>;

/** Parses the options once; anything malformed or contradictory → `invalid_config` naming the field. */
export function parseConfinedRootOptions(options: ConfinedRootOptions): ParsedConfinedRootOptions {
  const report = { record: "confined root options", code: "invalid_config" } as const;
  return parseRecord(confinedRootOptionsSchema, options, report);
}

function egressPolicyOf(options: {
  readonly egressAllowList?: readonly string[] | undefined;
  readonly egressHandler?: EgressHttpHandler | undefined;
  readonly egressHttps?: EgressHttpsInterception | undefined;
}): EgressPolicy | undefined {
  const handleHttp = options.egressHandler;
  if (handleHttp !== undefined) return { handleHttp, https: options.egressHttps };
  return options.egressAllowList;
}
