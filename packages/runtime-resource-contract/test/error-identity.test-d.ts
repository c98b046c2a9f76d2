import { describe, expectTypeOf, it } from "vitest";
import {
  type ErrorCode,
  type ErrorForCode,
  type ManagedRuntimeErrorWithCode,
  ManagedRuntimeError,
  type NotFoundError,
  SandboxFailedError,
  TimeoutError,
  createError,
} from "../src/index.js";

describe("error identity", () => {
  it("each class's isInstance narrows to its code, the base's to any coded error", () => {
    expectTypeOf(SandboxFailedError.isInstance).guards.toEqualTypeOf<
      ManagedRuntimeErrorWithCode<"sandbox_failed">
    >();
    expectTypeOf(TimeoutError.isInstance).guards.toEqualTypeOf<
      ManagedRuntimeErrorWithCode<"timeout">
    >();
    expectTypeOf(ManagedRuntimeError.isInstance).guards.toEqualTypeOf<ManagedRuntimeError>();
    expectTypeOf<SandboxFailedError>().toExtend<ManagedRuntimeErrorWithCode<"sandbox_failed">>();
    expectTypeOf<ManagedRuntimeErrorWithCode<"timeout">>().not.toExtend<
      ManagedRuntimeErrorWithCode<"sandbox_failed">
    >();
  });

  it("a class's code is its literal code", () => {
    expectTypeOf<SandboxFailedError["code"]>().toEqualTypeOf<"sandbox_failed">();
    expectTypeOf<NotFoundError["code"]>().toEqualTypeOf<"not_found">();
    expectTypeOf<ManagedRuntimeError["code"]>().toEqualTypeOf<ErrorCode>();
  });

  it("classes of different codes are different types", () => {
    expectTypeOf<TimeoutError>().not.toExtend<SandboxFailedError>();
    expectTypeOf<SandboxFailedError>().not.toExtend<TimeoutError>();
    expectTypeOf<SandboxFailedError>().toExtend<ManagedRuntimeError>();
  });

  it("createError returns the class of its code", () => {
    expectTypeOf(createError("timeout", { message: "m" })).toEqualTypeOf<TimeoutError>();
    expectTypeOf<ErrorForCode<"sandbox_failed">>().toEqualTypeOf<SandboxFailedError>();
    expectTypeOf(createError).returns.toExtend<ManagedRuntimeError>();
  });

  it("narrowing an unknown with a class's isInstance gives its code", () => {
    const error: unknown = new TimeoutError({ message: "m" });
    if (TimeoutError.isInstance(error)) expectTypeOf(error.code).toEqualTypeOf<"timeout">();
  });
});
