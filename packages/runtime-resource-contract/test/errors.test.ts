import { describe, expect, it } from "vitest";
import * as contract from "../src/index.js";
import {
  ERROR_CODES,
  ERROR_HTTP_STATUS,
  type ErrorCode,
  type ErrorContext,
  ManagedRuntimeError,
  TimeoutError,
  UpstreamProtocolError,
  createError,
  isErrorCode,
  isSecretBearingKey,
  redactSecrets,
  sanitizeErrorContext,
} from "../src/index.js";

type ErrorClass = new (options: { message: string }) => ManagedRuntimeError;

/** Every exported subclass of ManagedRuntimeError, found by walking the module's exports. */
const exportedClasses: ErrorClass[] = (Object.values(contract) as unknown[]).filter(
  (value): value is ErrorClass =>
    typeof value === "function" && value.prototype instanceof ManagedRuntimeError,
);

/** Simulates the wire: the JSON text a peer would send and receive. */
function overTheWire(error: ManagedRuntimeError): unknown {
  return JSON.parse(JSON.stringify(error));
}

describe("error classes", () => {
  it("maps storage_unwritable to 503 and carries it across the wire", () => {
    const error = createError("storage_unwritable", {
      message: "read-only file system (EROFS)",
      context: { errno: "EROFS" },
    });
    expect(error.httpStatus).toBe(503);
    expect(ManagedRuntimeError.fromJSON(overTheWire(error))).toMatchObject({
      code: "storage_unwritable",
      message: "read-only file system (EROFS)",
    });
  });

  it("exist once per code", () => {
    const codes = exportedClasses.map((errorClass) => new errorClass({ message: "m" }).code);
    expect(new Set(codes).size).toBe(codes.length);
    expect([...codes].sort()).toEqual([...ERROR_CODES].sort());
  });

  it.each(exportedClasses.map((errorClass) => [errorClass.name, errorClass] as const))(
    "%s names itself and maps to its HTTP status",
    (name, errorClass) => {
      const error = new errorClass({ message: "m" });
      expect(error.name).toBe(name);
      expect(error).toBeInstanceOf(Error);
      expect(error.httpStatus).toBe(ERROR_HTTP_STATUS[error.code]);
      expect(createError(error.code, { message: "m" })).toBeInstanceOf(errorClass);
    },
  );
});

describe("wire form", () => {
  it.each(ERROR_CODES.map((code) => [code]))(
    "%s round-trips through toJSON and fromJSON to the same class and code",
    (code) => {
      const original = createError(code, {
        message: `failure ${code}`,
        context: { attempt: 2, path: "/workspace/a", tags: ["x", 1, null] },
      });
      const rebuilt = ManagedRuntimeError.fromJSON(overTheWire(original));
      expect(rebuilt.constructor).toBe(original.constructor);
      expect(rebuilt.code).toBe(code);
      expect(rebuilt.message).toBe(original.message);
      expect(rebuilt.context).toEqual(original.context);
      expect(rebuilt.toJSON()).toEqual(original.toJSON());
    },
  );

  it("omits an empty context and never carries the cause", () => {
    const error = new TimeoutError({ message: "slow", cause: new Error("inner secret detail") });
    expect(error.toJSON()).toEqual({ code: "timeout", message: "slow" });
    expect(error.cause).toBeInstanceOf(Error);
    expect(JSON.stringify(error)).not.toContain("inner secret detail");
  });

  it("turns an unknown code into upstream_protocol and keeps the peer's code", () => {
    const rebuilt = ManagedRuntimeError.fromJSON({
      code: "quota_exhausted",
      message: "try later",
      context: { retryAfter: 5 },
    });
    expect(rebuilt).toBeInstanceOf(UpstreamProtocolError);
    expect(rebuilt.code).toBe("upstream_protocol");
    expect(rebuilt.message).toContain("try later");
    expect(rebuilt.context).toEqual({ retryAfter: 5, peerCode: "quota_exhausted" });
  });

  it.each([[null], ["a string"], [42], [{}], [{ code: 7, message: 8 }]])(
    "turns %j into upstream_protocol",
    (json) => {
      const rebuilt = ManagedRuntimeError.fromJSON(json);
      expect(rebuilt.code).toBe("upstream_protocol");
      expect(rebuilt.context.peerCode).toBeNull();
    },
  );

  it("drops secret-bearing and non-JSON context a peer sends", () => {
    const rebuilt = ManagedRuntimeError.fromJSON({
      code: "unauthorized",
      message: "no",
      context: { token: "t-1", user: "u", nested: { a: 1 } },
    });
    expect(rebuilt.context).toEqual({ user: "u" });
  });
});

describe("isInstance and hasCode", () => {
  it("hold for a structurally separate copy of the package carrying the shared marker", () => {
    // A second install of the package defines its own class but the same Symbol.for marker.
    const foreign = Object.assign(new Error("from another copy"), {
      code: "timeout",
      context: {},
      [Symbol.for("open-managed-agents.runtime-error")]: true,
    });
    expect(foreign instanceof ManagedRuntimeError).toBe(false);
    expect(ManagedRuntimeError.isInstance(foreign)).toBe(true);
    expect(ManagedRuntimeError.hasCode(foreign, "timeout")).toBe(true);
    expect(ManagedRuntimeError.hasCode(foreign, "aborted")).toBe(false);
  });

  it("are false for look-alikes without the marker", () => {
    expect(ManagedRuntimeError.isInstance({ code: "timeout", message: "m" })).toBe(false);
    expect(ManagedRuntimeError.isInstance(new Error("plain"))).toBe(false);
    expect(
      ManagedRuntimeError.isInstance({ [Symbol("open-managed-agents.runtime-error")]: true }),
    ).toBe(false);
    expect(
      ManagedRuntimeError.isInstance({ [Symbol.for("open-managed-agents.runtime-error")]: "yes" }),
    ).toBe(false);
    expect(ManagedRuntimeError.isInstance(null)).toBe(false);
    expect(ManagedRuntimeError.isInstance(undefined)).toBe(false);
  });

  it("are true for every class of this copy", () => {
    for (const code of ERROR_CODES)
      expect(ManagedRuntimeError.hasCode(createError(code, { message: "m" }), code)).toBe(true);
  });
});

describe("secret-bearing context", () => {
  const secretKeys = [
    "token",
    "fenceToken",
    "apiKey",
    "api_key",
    "x-api-key",
    "secret",
    "clientSecret",
    "secretAccessKey",
    "accessKeyId",
    "password",
    "passwd",
    "authorization",
    "Authorization",
    "credential",
    "credentials",
    "sessionToken",
  ];

  it("is dropped at runtime even when a cast slips past the type", () => {
    const context = Object.fromEntries([
      ...secretKeys.map((key) => [key, "hunter2"]),
      ["runtimeId", "r-1"],
    ]) as unknown as ErrorContext;
    const error = createError("sandbox_failed", { message: "boom", context });
    expect(error.context).toEqual({ runtimeId: "r-1" });
    expect(JSON.stringify(error.toJSON())).not.toContain("hunter2");
    for (const key of secretKeys) expect(isSecretBearingKey(key)).toBe(true);
    expect(isSecretBearingKey("runtimeId")).toBe(false);
  });

  it("keeps only JSON scalars and flat scalar arrays", () => {
    expect(
      sanitizeErrorContext({
        ok: 1,
        flag: false,
        none: null,
        list: ["a", 2],
        nan: Number.NaN,
        deep: { a: 1 },
        mixed: [{}],
        fn: () => 1,
        gone: undefined,
      }),
    ).toEqual({ ok: 1, flag: false, none: null, list: ["a", 2] });
    expect(sanitizeErrorContext("not an object")).toEqual({});
  });

  it("freezes the context", () => {
    const error = createError("internal", { message: "m", context: { a: 1 } });
    expect(Object.isFrozen(error.context)).toBe(true);
  });
});

describe("codes and redaction", () => {
  it("isErrorCode accepts exactly the published codes", () => {
    for (const code of ERROR_CODES) expect(isErrorCode(code)).toBe(true);
    expect(isErrorCode("TIMEOUT")).toBe(false);
    expect(isErrorCode(undefined)).toBe(false);
  });

  it("maps every code to a 4xx or 5xx status", () => {
    for (const code of ERROR_CODES)
      expect(ERROR_HTTP_STATUS[code as ErrorCode]).toBeGreaterThanOrEqual(400);
    expect(Object.keys(ERROR_HTTP_STATUS).sort()).toEqual([...ERROR_CODES].sort());
  });

  it("redactSecrets replaces every occurrence and ignores empty secrets", () => {
    expect(redactSecrets("token abc then abc again", ["abc", "", null, undefined])).toBe(
      "token [redacted] then [redacted] again",
    );
    expect(redactSecrets("nothing here", [])).toBe("nothing here");
  });
});
