import { describe, expect, it } from "vitest";
import * as contract from "../src/index.js";
import {
  ERROR_CLASSES,
  ERROR_CODES,
  ManagedRuntimeError,
  SandboxFailedError,
  TimeoutError,
  createError,
} from "../src/index.js";

describe("each error class's isInstance", () => {
  it.each(ERROR_CODES.map((code) => [code]))("%s: true for its own code only", (code) => {
    const errorClass = ERROR_CLASSES[code];
    for (const other of ERROR_CODES) {
      expect(
        errorClass.isInstance(createError(other, { message: "m" })),
        `${errorClass.name}.isInstance(${other})`,
      ).toBe(other === code);
    }
  });

  it("is false for any coded error of another code (the base's check is not inherited)", () => {
    const timeout = new TimeoutError({ message: "slow" });
    expect(ManagedRuntimeError.isInstance(timeout)).toBe(true);
    expect(SandboxFailedError.isInstance(timeout)).toBe(false);
    expect(TimeoutError.isInstance(timeout)).toBe(true);
  });

  it("holds for a copy of the package that carries the shared marker and the code", () => {
    const foreign = Object.assign(new Error("from another copy"), {
      code: "sandbox_failed",
      context: {},
      [Symbol.for("open-managed-agents.runtime-error")]: true,
    });
    expect(SandboxFailedError.isInstance(foreign)).toBe(true);
    expect(TimeoutError.isInstance(foreign)).toBe(false);
    expect(SandboxFailedError.isInstance({ code: "sandbox_failed" })).toBe(false);
  });

  it("is false for non-objects", () => {
    for (const value of [null, undefined, "sandbox_failed", 7])
      expect(SandboxFailedError.isInstance(value)).toBe(false);
  });
});

describe("the code -> class table", () => {
  it("is a plain object with one class per code, each building its own code", () => {
    expect(Object.getPrototypeOf(ERROR_CLASSES)).toBe(Object.prototype);
    expect(Object.keys(ERROR_CLASSES).sort()).toEqual([...ERROR_CODES].sort());
    for (const code of ERROR_CODES)
      expect(new ERROR_CLASSES[code]({ message: "m" }).code).toBe(code);
  });

  it("is the only way classes are found: nothing registers them at import time", () => {
    expect("registerErrorClass" in contract).toBe(false);
    for (const code of ERROR_CODES)
      expect(ManagedRuntimeError.fromJSON({ code, message: "m" })).toBeInstanceOf(
        ERROR_CLASSES[code],
      );
  });
});
