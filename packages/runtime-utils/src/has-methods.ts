/** True when `value` is a function. */
export const isFunction = (value: unknown): value is (...args: never[]) => unknown =>
  typeof value === "function";

/**
 * True when `value` is an object (or function) with a function under each of `methods`. A missing
 * member, a non-object or a non-function member is never success: callers treat absence as "unsupported".
 */
export function hasMethods(value: unknown, methods: readonly string[]): boolean {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false;
  const record = value as Record<string, unknown>;
  return methods.every((method) => isFunction(record[method]));
}
