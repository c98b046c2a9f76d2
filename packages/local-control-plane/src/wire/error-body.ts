import * as z from "zod";
import { leaseStateSchema } from "./work-schemas.js";

/** `ErrorType` values the platform sends. */
export const platformErrorTypeSchema = z.enum([
  "invalid_request_error",
  "authentication_error",
  "permission_error",
  "not_found_error",
  "conflict_error",
  "api_error",
]);
/** A platform error type. */
export type PlatformErrorType = z.output<typeof platformErrorTypeSchema>;

/**
 * The platform's error JSON (`ErrorResponse`): `{type: "error", error: {type, message, details?}, request_id}`.
 * `details.error_code` selects the SDK's typed error class (`412 heartbeat_precondition_failed`).
 */
export const platformErrorBodySchema = z
  .object({
    type: z.literal("error"),
    error: z
      .object({
        type: platformErrorTypeSchema,
        message: z.string(),
        details: z
          .union([
            z
              .object({
                error_code: z.literal("heartbeat_precondition_failed"),
                current_state: leaseStateSchema,
              })
              .strict(),
            z.object({ error_code: z.string() }).strict(),
          ])
          .optional(),
      })
      .strict(),
    request_id: z.string().nullable(),
  })
  .strict();
/** Wire form of a platform error. */
export type PlatformErrorBody = z.output<typeof platformErrorBodySchema>;
