import {
  type ErrorCode,
  ManagedRuntimeError,
  type RuntimeOrphanPort,
} from "@open-managed-agents/runtime-resource-contract";

const CONFORMANCE_FAILURE_MARKER = Symbol.for("open-managed-agents.conformance-failure");

/**
 * A driver did not do what a conformance case requires. It is not a runtime error of the seam, so it is
 * not part of the contract's taxonomy; reports show its message.
 */
export class ConformanceFailure extends Error {
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super(message, options);
    this.name = "ConformanceFailure";
    Object.defineProperty(this, CONFORMANCE_FAILURE_MARKER, { value: true });
  }

  /** True for a {@link ConformanceFailure} from whichever copy of this module built it. */
  static isInstance(error: unknown): error is ConformanceFailure {
    return (
      typeof error === "object" &&
      error !== null &&
      (error as Record<symbol, unknown>)[CONFORMANCE_FAILURE_MARKER] === true
    );
  }
}

/** Throws a {@link ConformanceFailure} with `message` unless `condition` holds. */
export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new ConformanceFailure(message);
}

/**
 * Fails when `orphans` lists a record, naming `what` and the error the record keeps (why the host's
 * terminate failed), so the failure line carries its cause.
 */
export async function checkNoOrphans(orphans: RuntimeOrphanPort, what: string): Promise<void> {
  const records = await orphans.list({ limit: 10 });
  const [first] = records;
  if (first === undefined) return;
  const count = records.length === 1 ? "one orphan" : `${records.length} orphans`;
  throw new ConformanceFailure(`${what}: ${count}; the terminate failed with ${first.lastError}`);
}

/**
 * Runs `action` and returns the typed error it throws. Fails when it resolves, or throws anything but a
 * {@link ManagedRuntimeError} with one of `codes`.
 */
export async function expectTypedError(
  action: () => Promise<unknown>,
  codes: readonly ErrorCode[],
  what: string,
): Promise<ManagedRuntimeError> {
  let outcome: unknown;
  try {
    outcome = await action();
  } catch (error) {
    if (ManagedRuntimeError.isInstance(error) && codes.includes(error.code)) return error;
    throw new ConformanceFailure(
      `${what}: expected a typed ${codes.join(" or ")} error, got ${describeError(error)}`,
      { cause: error },
    );
  }
  throw new ConformanceFailure(
    `${what}: expected a typed ${codes.join(" or ")} error, but it succeeded with ${preview(outcome)}`,
  );
}

/** Runs `action`, turning anything it throws into a failure that says what was being done. */
export async function expectSuccess<T>(action: () => Promise<T>, what: string): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (ConformanceFailure.isInstance(error)) throw error;
    throw new ConformanceFailure(`${what} failed: ${describeError(error)}`, { cause: error });
  }
}

/**
 * Fails when the JSON form of `value` contains any of `secrets`, naming `what` and the first JSON path
 * that holds it. Values that are not JSON (functions, class instances with hidden state) fail as well.
 */
export function checkNoSecrets(value: unknown, secrets: readonly string[], what: string): void {
  const known = secrets.filter((secret) => secret.length >= 6);
  const visit = (node: unknown, path: string): void => {
    if (typeof node === "string") {
      const leaked = known.find((secret) => node.includes(secret));
      check(leaked === undefined, `${what} leaks a secret at ${path}`);
    } else if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) visit(item, `${path}[${index}]`);
    } else if (typeof node === "object" && node !== null) {
      const prototype = Object.getPrototypeOf(node);
      check(
        prototype === Object.prototype || prototype === null,
        `${what} holds a non-plain object at ${path}`,
      );
      for (const [key, child] of Object.entries(node)) {
        const leaked = known.find((secret) => key.includes(secret));
        check(leaked === undefined, `${what} leaks a secret in the key at ${path}`);
        visit(child, `${path}.${key}`);
      }
    } else {
      check(
        node === null || ["number", "boolean", "undefined"].includes(typeof node),
        `${what} holds a ${typeof node} at ${path}`,
      );
    }
  };
  visit(value, "$");
}

/** A one-line description of a thrown value: class, code and message. */
export function describeError(error: unknown): string {
  if (ManagedRuntimeError.isInstance(error))
    return `${error.name} (${error.code}): ${error.message}`;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

function preview(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 200 ? `${text.slice(0, 200)}…` : text;
  } catch {
    return String(value);
  }
}
