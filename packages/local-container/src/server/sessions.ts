import { ControlApiError } from "./wire.js";

/** Sessions one container keeps at most; each is small, the bound only stops runaway creation. */
const MAX_SESSIONS = 256;

/** What a session carries from one command to the next. */
export interface SessionState {
  readonly id: string;
  /** Working directory as the command last left it. */
  cwd: string;
  /** Exported environment as the command last left it. */
  env: Record<string, string>;
}

/** Sessions of one container. */
export interface SessionStore {
  /** Creates a session; an existing id → 409 `SESSION_ALREADY_EXISTS`. */
  create(id: string, options: { cwd?: string; env?: Record<string, string> }): SessionState;
  /** The session, created with defaults when unknown (as the control server does for exec). */
  getOrCreate(id: string): SessionState;
  /** Forgets a session; false when it did not exist. */
  delete(id: string): boolean;
  list(): string[];
}

/** Creates the session store of a container whose commands start from `baseEnv`. */
export function createSessionStore(baseEnv: Readonly<Record<string, string>>): SessionStore {
  const sessions = new Map<string, SessionState>();
  const add = (id: string, cwd: string, env: Record<string, string>): SessionState => {
    if (sessions.size >= MAX_SESSIONS) {
      throw new ControlApiError("SESSION_LIMIT_REACHED", 429, `A container keeps at most ${MAX_SESSIONS} sessions`, { sessionId: id, maxSessions: MAX_SESSIONS });
    }
    const session: SessionState = { id, cwd, env: { ...baseEnv, ...env } };
    sessions.set(id, session);
    return session;
  };
  return {
    create(id, options) {
      if (sessions.has(id)) {
        throw new ControlApiError("SESSION_ALREADY_EXISTS", 409, `Session '${id}' already exists`, { sessionId: id, containerPlacementId: null }, {
          suggestion: "Use a different session id or reuse the existing session",
        });
      }
      return add(id, options.cwd ?? "/workspace", options.env ?? {});
    },
    getOrCreate(id) {
      return sessions.get(id) ?? add(id, "/workspace", {});
    },
    delete(id) {
      return sessions.delete(id);
    },
    list() {
      return [...sessions.keys()];
    },
  };
}
