import type { IncomingMessage, ServerResponse } from "node:http";
import type { LocalContainer } from "./container-registry.js";
import type { LocalContainerLimits } from "./options.js";

/** What a control API route handler receives. */
export interface RouteContext {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly url: URL;
  readonly container: LocalContainer;
  readonly limits: LocalContainerLimits;
  /** See `LocalContainerServerOptions.fileWriteFillDelayMs`. */
  readonly fileWriteFillDelayMs: number;
}

/** A route handler; it answers through `context.response` or throws a `ControlApiError`. */
export type RouteHandler = (context: RouteContext) => Promise<void>;
