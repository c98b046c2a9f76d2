import type { SessionShell } from "./session-shell.js";
import { ControlApiError } from "./control-api-error.js";

/** Sessions one container keeps at most; each is small, the bound only stops runaway creation. */
const MAX_SESSIONS = 256;

/** What a session carries from one command to the next. */
export interface SessionState {
  readonly id: string;
  /** Working directory as the session's shell last reported it (file routes resolve relative paths here). */
  cwd: string;
  /** Environment the session's shell starts with. */
  env: Record<string, string>;
  /** Default timeout of the session's foreground commands, as `createSession({commandTimeoutMs})` sets it. */
  readonly commandTimeoutMs: number | undefined;
  /** The session's persistent shell, started by its first command. */
  shell: Promise<SessionShell> | undefined;
  /** Kills of processes started in the session; run when the session is deleted. */
  readonly members: Set<() => void>;
  /** Runs `task` after every earlier task of the session: commands of one session run one at a time. */
  exclusive<T>(task: () => Promise<T>): Promise<T>;
}

/** Sessions of one container. */
export interface SessionStore {
  /** Creates a session; an existing id → 409 `SESSION_ALREADY_EXISTS`. */
  create(
    id: string,
    options: { cwd?: string; env?: Record<string, string>; commandTimeoutMs?: number },
  ): SessionState;
  /** The session, created with defaults when unknown (as the control server does for exec). */
  getOrCreate(id: string): SessionState;
  /** Forgets a session, killing its shell and every process started in it; false when it did not exist. */
  delete(id: string): boolean;
  /** Forgets `session` if it is still the one under its id (its shell exited); what it started keeps running. */
  discard(session: SessionState): void;
  list(): string[];
  /** Deletes every session. */
  clear(): void;
}

/** Creates the session store of a container whose commands start from `baseEnv`. */
export function createSessionStore(baseEnv: Readonly<Record<string, string>>): SessionStore {
  const sessions = new Map<string, SessionState>();
  const add = (
    id: string,
    cwd: string,
    env: Record<string, string>,
    commandTimeoutMs: number | undefined,
  ): SessionState => {
    if (sessions.size >= MAX_SESSIONS) {
      throw new ControlApiError(
        "SESSION_LIMIT_REACHED",
        429,
        `A container keeps at most ${MAX_SESSIONS} sessions`,
        { sessionId: id, maxSessions: MAX_SESSIONS },
      );
    }
    let queue: Promise<unknown> = Promise.resolve();
    const session: SessionState = {
      id,
      cwd,
      env: { ...baseEnv, ...env },
      commandTimeoutMs,
      shell: undefined,
      members: new Set(),
      exclusive(task) {
        const next = queue.then(task, task);
        queue = next.catch(() => undefined);
        return next;
      },
    };
    sessions.set(id, session);
    return session;
  };
  const end = (session: SessionState): void => {
    void session.shell?.then(
      (shell) => shell.kill(),
      () => undefined,
    );
    for (const kill of session.members) kill();
    session.members.clear();
  };
  return {
    create(id, options) {
      if (sessions.has(id)) {
        throw new ControlApiError(
          "SESSION_ALREADY_EXISTS",
          409,
          `Session '${id}' already exists`,
          { sessionId: id, containerPlacementId: null },
          {
            suggestion: "Use a different session id or reuse the existing session",
          },
        );
      }
      return add(id, options.cwd ?? "/workspace", options.env ?? {}, options.commandTimeoutMs);
    },
    getOrCreate(id) {
      return sessions.get(id) ?? add(id, "/workspace", {}, undefined);
    },
    delete(id) {
      const session = sessions.get(id);
      if (session === undefined) return false;
      sessions.delete(id);
      end(session);
      return true;
    },
    discard(session) {
      if (sessions.get(session.id) === session) sessions.delete(session.id);
    },
    list() {
      return [...sessions.keys()];
    },
    clear() {
      for (const session of sessions.values()) end(session);
      sessions.clear();
    },
  };
}
