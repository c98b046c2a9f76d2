/** What {@link readAmaWorkerConfig} found in the process environment. Holds credentials: never log it. */
export interface AmaWorkerConfig {
  /** Managed Agents API origin the item's calls go to. */
  readonly baseURL: string;
  /** Bearer of the client: the item's sessions token, else the environment key. */
  readonly authToken: string;
  /** Directory the agent's tools work in. */
  readonly workdir: string;
  /** Idle time after which the session's turn is considered over. */
  readonly maxIdleMs: number | undefined;
}

const AMA_WORKER_CONFIG_ERROR_MARKER = Symbol.for("open-managed-agents.ama-worker-config-error");

/** A configuration problem, named by the variable; the message never carries a value. */
export class AmaWorkerConfigError extends Error {
  /** The variable that is missing or malformed. */
  readonly variable: string;

  constructor(variable: string, problem: string) {
    super(`${variable} ${problem}`);
    this.name = "AmaWorkerConfigError";
    Object.defineProperty(this, AMA_WORKER_CONFIG_ERROR_MARKER, { value: true });
    this.variable = variable;
  }

  /** True for an {@link AmaWorkerConfigError} from whichever copy of this module built it. */
  static isInstance(error: unknown): error is AmaWorkerConfigError {
    return (
      typeof error === "object" &&
      error !== null &&
      (error as Record<symbol, unknown>)[AMA_WORKER_CONFIG_ERROR_MARKER] === true
    );
  }
}

const REQUIRED = ["ANTHROPIC_WORK_ID", "ANTHROPIC_ENVIRONMENT_ID", "ANTHROPIC_SESSION_ID"] as const;

/**
 * Reads what `EnvironmentWorker.handleItem()` needs: the `ANTHROPIC_WORK_*` ids (checked here so a
 * missing one fails before any request), the API origin (`ANTHROPIC_BASE_URL`, else the secret's
 * `api_base_url`), and a credential (the secret's `sessions_token`, else `ANTHROPIC_ENVIRONMENT_KEY`).
 */
export function readAmaWorkerConfig(
  env: Readonly<Record<string, string | undefined>>,
): AmaWorkerConfig {
  for (const name of REQUIRED) if (!env[name]) throw new AmaWorkerConfigError(name, "is not set");
  const secret = decodeSecret(env.ANTHROPIC_WORK_SECRET);
  const baseURL = env.ANTHROPIC_BASE_URL || secret.apiBaseUrl;
  if (!baseURL)
    throw new AmaWorkerConfigError(
      "ANTHROPIC_BASE_URL",
      "is not set and the work secret names no api_base_url",
    );
  if (!URL.canParse(baseURL)) throw new AmaWorkerConfigError("ANTHROPIC_BASE_URL", "is not a URL");
  const authToken = secret.sessionsToken ?? env.ANTHROPIC_ENVIRONMENT_KEY;
  if (!authToken)
    throw new AmaWorkerConfigError(
      "ANTHROPIC_WORK_SECRET",
      "carries no sessions_token and ANTHROPIC_ENVIRONMENT_KEY is not set",
    );
  const idle = env.OMA_AMA_MAX_IDLE_MS;
  const maxIdleMs = idle === undefined || idle === "" ? undefined : Number(idle);
  if (maxIdleMs !== undefined && !(Number.isSafeInteger(maxIdleMs) && maxIdleMs > 0)) {
    throw new AmaWorkerConfigError("OMA_AMA_MAX_IDLE_MS", "must be a positive integer");
  }
  return { baseURL, authToken, workdir: env.OMA_AMA_WORKDIR || "/workspace", maxIdleMs };
}

function decodeSecret(secret: string | undefined): {
  sessionsToken: string | null;
  apiBaseUrl: string | null;
} {
  if (!secret) return { sessionsToken: null, apiBaseUrl: null };
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(secret, "base64url").toString("utf8"));
  } catch {
    throw new AmaWorkerConfigError(
      "ANTHROPIC_WORK_SECRET",
      "is not URL-safe base64 of a JSON object",
    );
  }
  if (typeof payload !== "object" || payload === null)
    throw new AmaWorkerConfigError("ANTHROPIC_WORK_SECRET", "does not decode to a JSON object");
  const { sessions_token: token, api_base_url: apiBaseUrl } = payload as Record<string, unknown>;
  return {
    sessionsToken: typeof token === "string" && token !== "" ? token : null,
    apiBaseUrl: typeof apiBaseUrl === "string" && apiBaseUrl !== "" ? apiBaseUrl : null,
  };
}
