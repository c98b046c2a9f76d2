export { type LocalControlPlane, startLocalControlPlane } from "./server.js";
export type { LocalControlPlaneOptions } from "./options.js";
export type { ControlPlaneEvent, ControlPlaneObserver } from "./events.js";
export { HeartbeatPreconditionFailedError, type LeaseState } from "./errors.js";
export { signWebhook, type WebhookDelivery, type WebhookTarget } from "./webhooks.js";
export { MANAGED_AGENTS_BETA } from "./http/auth.js";
export {
  type ToolCall,
  toolCallSchema,
  queueTurnBodySchema,
  createSessionBodySchema,
  createEnvironmentBodySchema,
} from "./wire/admin-schemas.js";
export {
  workItemSchema,
  heartbeatResponseSchema,
  leaseStateSchema,
  queueStatsSchema,
  workSecretSchema,
  type WorkState,
  type WorkItemWire,
} from "./wire/work-schemas.js";
export { sessionSchema, type SessionWire } from "./wire/session-schemas.js";
export {
  sessionEventSchema,
  sendEventsBodySchema,
  type SessionEventWire,
} from "./wire/event-schemas.js";
export { platformErrorBodySchema, type PlatformErrorBody } from "./wire/error-body.js";
