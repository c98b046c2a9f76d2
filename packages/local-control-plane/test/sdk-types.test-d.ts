import type {
  BetaSelfHostedWork,
  BetaSelfHostedWorkHeartbeatResponse,
  BetaSelfHostedWorkListResponse,
  BetaSelfHostedWorkQueueStats,
  BetaWorkLeaseState,
  BetaWorkSecret,
  WorkStopParams,
} from "@anthropic-ai/sdk/resources/beta/environments/work";
import type {
  BetaManagedAgentsEventParams,
  BetaManagedAgentsImageBlock,
  BetaManagedAgentsTextBlock,
  BetaManagedAgentsSendSessionEvents,
  BetaManagedAgentsSessionEvent,
  BetaManagedAgentsStreamSessionEvents,
  BetaManagedAgentsUserToolResultEventParams,
} from "@anthropic-ai/sdk/resources/beta/sessions/events";
import type { BetaManagedAgentsSession } from "@anthropic-ai/sdk/resources/beta/sessions/sessions";
import type { BetaSkillVersion } from "@anthropic-ai/sdk/resources/beta/skills/versions";
import type { BetaWebhookEvent } from "@anthropic-ai/sdk/resources/beta/webhooks";
import type { ErrorResponse, ErrorType } from "@anthropic-ai/sdk/resources/shared";
import { describe, expectTypeOf, it } from "vitest";
import type * as z from "zod";
import type { pendingEvent } from "../src/webhooks.js";
import type { platformErrorBodySchema } from "../src/wire/error-body.js";
import type {
  eventListSchema,
  eventParamsSchema,
  sendEventsResponseSchema,
  sessionEventSchema,
} from "../src/wire/event-schemas.js";
import type { sessionSchema } from "../src/wire/session-schemas.js";
import type { skillVersionSchema } from "../src/wire/skill-schemas.js";
import type {
  heartbeatResponseSchema,
  leaseStateSchema,
  queueStatsSchema,
  stopBodySchema,
  workItemSchema,
  workListSchema,
  workSecretSchema,
} from "../src/wire/work-schemas.js";

/** `true` when `Sub` is assignable to `Super` (plain TypeScript assignability, as the SDK's code sees a value). */
type Assignable<Sub, Super> = [Sub] extends [Super] ? true : false;

// Every response the server writes is the output of one of these schemas; each must be a value of the
// SDK's own type, so the SDK's code reads it as it reads the platform's.
describe("response schemas produce the SDK's types", () => {
  it("work", () => {
    expectTypeOf<
      Assignable<z.output<typeof workItemSchema>, BetaSelfHostedWork>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<z.output<typeof heartbeatResponseSchema>, BetaSelfHostedWorkHeartbeatResponse>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<z.output<typeof leaseStateSchema>, BetaWorkLeaseState>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<z.output<typeof queueStatsSchema>, BetaSelfHostedWorkQueueStats>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<z.output<typeof workListSchema>, BetaSelfHostedWorkListResponse>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<z.output<typeof workSecretSchema>, BetaWorkSecret>
    >().toEqualTypeOf<true>();
  });

  it("sessions and events", () => {
    expectTypeOf<
      Assignable<z.output<typeof sessionSchema>, BetaManagedAgentsSession>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<z.output<typeof sessionEventSchema>, BetaManagedAgentsSessionEvent>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<z.output<typeof sessionEventSchema>, BetaManagedAgentsStreamSessionEvents>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<z.output<typeof eventListSchema>["data"][number], BetaManagedAgentsSessionEvent>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<z.output<typeof sendEventsResponseSchema>, BetaManagedAgentsSendSessionEvents>
    >().toEqualTypeOf<true>();
  });

  it("skills", () => {
    expectTypeOf<
      Assignable<z.output<typeof skillVersionSchema>, BetaSkillVersion>
    >().toEqualTypeOf<true>();
  });

  it("errors and webhooks", () => {
    expectTypeOf<
      Assignable<
        z.output<typeof platformErrorBodySchema>,
        Omit<ErrorResponse, "error"> & { error: { type: ErrorType; message: string } }
      >
    >().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<ReturnType<typeof pendingEvent>, BetaWebhookEvent>
    >().toEqualTypeOf<true>();
  });
});

/** A tool result with the content the agent toolset produces (documents and search results are refused). */
type TextAndImageResult = Omit<BetaManagedAgentsUserToolResultEventParams, "content"> & {
  content?: Array<BetaManagedAgentsTextBlock | BetaManagedAgentsImageBlock>;
};

// Request schemas must accept what the SDK sends.
describe("request schemas accept the SDK's params", () => {
  it("tool results and stop", () => {
    expectTypeOf<
      Assignable<TextAndImageResult, z.input<typeof eventParamsSchema>>
    >().toEqualTypeOf<true>();
    expectTypeOf<
      Assignable<Pick<WorkStopParams, "force">, z.input<typeof stopBodySchema>>
    >().toEqualTypeOf<true>();
  });

  it("accepts only a subset of the SDK's event params", () => {
    expectTypeOf<
      Assignable<z.input<typeof eventParamsSchema>["type"], BetaManagedAgentsEventParams["type"]>
    >().toEqualTypeOf<true>();
  });
});
