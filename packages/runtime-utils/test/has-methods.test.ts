import { describe, expect, it } from "vitest";
import { hasMethods, isFunction } from "../src/index.js";

describe("hasMethods", () => {
  it("is true only when every named member is a function", () => {
    expect(hasMethods({ get() {}, put: () => undefined }, ["get", "put"])).toBe(true);
    expect(
      hasMethods(
        Object.assign(() => undefined, { now: () => 1 }),
        ["now"],
      ),
    ).toBe(true);
    expect(hasMethods({ get() {} }, ["get", "put"])).toBe(false);
    expect(hasMethods({ get: 1 }, ["get"])).toBe(false);
    for (const value of [null, undefined, 1, "get"]) expect(hasMethods(value, ["get"])).toBe(false);
  });

  it("finds methods on the prototype chain", () => {
    class Store {
      get(): void {}
    }
    expect(hasMethods(new Store(), ["get"])).toBe(true);
  });

  it("isFunction tells functions from the rest", () => {
    expect(isFunction(() => undefined)).toBe(true);
    expect(isFunction({})).toBe(false);
  });
});
