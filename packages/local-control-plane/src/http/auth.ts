import type { IncomingMessage } from "node:http";
import { createError } from "@open-managed-agents/runtime-resource-contract";
import type {
  ControlPlaneState,
  EnvironmentRecord,
  Principal,
} from "../state/control-plane-state.js";
import type { SessionRecord } from "../state/sessions.js";

/** The beta the Managed Agents routes require in `anthropic-beta`. */
export const MANAGED_AGENTS_BETA = "managed-agents-2026-04-01";

/** Refuses a request without the Managed Agents beta header, as the platform does. */
export function requireBeta(request: IncomingMessage): void {
  const header = request.headers["anthropic-beta"];
  const values = (Array.isArray(header) ? header.join(",") : (header ?? ""))
    .split(",")
    .map((value) => value.trim());
  if (!values.includes(MANAGED_AGENTS_BETA)) {
    throw createError("invalid_request", {
      message: `this route requires the anthropic-beta header ${MANAGED_AGENTS_BETA}`,
      context: { beta: MANAGED_AGENTS_BETA },
    });
  }
}

const unauthorized = (message: string) => createError("unauthorized", { message });

/** Resolves the credential or refuses with 401; the token itself never enters the message. */
export function authenticate(state: ControlPlaneState, token: string | null): Principal {
  if (!token) throw unauthorized("missing credential: send Authorization: Bearer <key>");
  const principal = state.principal(token);
  if (!principal) throw unauthorized("invalid credential");
  return principal;
}

/** Poll, ack, list and stats: the environment key of that environment. */
export function requireEnvironmentKey(principal: Principal, environment: EnvironmentRecord): void {
  if (principal.kind !== "environment" || principal.environment.id !== environment.id)
    throw unauthorized("this route accepts only the environment key of the environment");
}

/** Heartbeat and stop: the item's sessions token, or the environment key. */
export function requireWorkCredential(
  principal: Principal,
  environment: EnvironmentRecord,
  workId: string,
): void {
  if (principal.kind === "work" && principal.work.id === workId) return;
  if (principal.kind === "environment" && principal.environment.id === environment.id) return;
  throw unauthorized("this route accepts the work item's sessions token or the environment key");
}

/** Session routes: the sessions token of a live item of this session, the environment key, or the API key. */
export function requireSessionCredential(principal: Principal, session: SessionRecord): void {
  if (principal.kind === "api_key") return;
  if (principal.kind === "environment" && principal.environment.id === session.environmentId)
    return;
  if (
    principal.kind === "work" &&
    principal.work.data.type === "session" &&
    principal.work.data.id === session.id &&
    principal.work.state !== "stopped"
  )
    return;
  throw unauthorized("this credential does not grant access to the session");
}

/** Admin routes and the API-key-only routes: the admin token. */
export function requireApiKey(principal: Principal): void {
  if (principal.kind !== "api_key") throw unauthorized("this route accepts only the API key");
}
