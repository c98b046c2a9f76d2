import * as z from "zod";
import { parseRecord } from "@open-managed-agents/runtime-resource-contract";
import { hasMethods } from "@open-managed-agents/runtime-utils";
import { type Clock, systemClock } from "../time.js";

export { hasMethods };

/** Accepts any object with a `now()` function. */
export const clockSchema = z.custom<Clock>(
  (value) => hasMethods(value, ["now"]),
  "must be a Clock with a now() function",
);

/** Options every store factory accepts. */
export interface StoreClockOptions {
  /** Source of the current time; expiry and record timestamps read it. @default systemClock */
  readonly clock?: Clock;
}

const storeClockOptionsSchema = z.object({ clock: clockSchema.optional() });

/** Validates `{clock?}` once, at factory time; failure is `invalid_config` naming the field. */
export function parseStoreClockOptions(
  options: unknown,
  record: string,
): { readonly clock: Clock } {
  const parsed = parseRecord(storeClockOptionsSchema, options ?? {}, {
    record,
    code: "invalid_config",
  });
  return { clock: parsed.clock ?? systemClock };
}

/** Epoch milliseconds as an ISO-8601 string. */
export function isoTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
