import * as z from "zod";

/** A whole number from 1 up to `Number.MAX_SAFE_INTEGER`: sizes, limits, timeouts in ms. */
export const positiveSafeIntegerSchema = z
  .number()
  .int()
  .positive()
  .max(Number.MAX_SAFE_INTEGER, "must be a positive safe integer");

/** A whole number from 0 up to `Number.MAX_SAFE_INTEGER`: byte counts, offsets. */
export const nonNegativeSafeIntegerSchema = z
  .number()
  .int()
  .nonnegative()
  .max(Number.MAX_SAFE_INTEGER, "must be a safe integer");

/** A schema for a function of type `F`; option schemas use it for injected callbacks (`fetch`, `random`). */
export const functionSchema = <
  F extends (...args: never[]) => unknown = (...args: never[]) => unknown,
>(
  message = "must be a function",
) => z.custom<F>((value) => typeof value === "function", message);
