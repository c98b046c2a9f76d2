import { describe, expect, it } from "vitest";
import { matchPattern, matchRoute } from "../src/http.js";

const routes = [
  { method: "GET", pattern: "/v1/work/poll", name: "poll" },
  { method: "GET", pattern: "/v1/work/:work_id", name: "read" },
  { method: "POST", pattern: "/v1/work/:work_id", name: "stop" },
  { method: "*", pattern: "/files/:id/*rest", name: "files" },
] as const;

describe("matchRoute", () => {
  it("takes the first route whose method and pattern match, literal segments before parameters", () => {
    expect(matchRoute(routes, "GET", "/v1/work/poll")).toMatchObject({
      kind: "matched",
      route: { name: "poll" },
      params: {},
    });
    expect(matchRoute(routes, "POST", "/v1/work/w%201")).toMatchObject({
      kind: "matched",
      route: { name: "stop" },
      params: { work_id: "w 1" },
    });
  });

  it("tells a path with other methods from an unknown path", () => {
    expect(matchRoute(routes, "DELETE", "/v1/work/w1")).toEqual({
      kind: "method_not_allowed",
      allowed: ["GET", "POST"],
    });
    expect(matchRoute(routes, "GET", "/v1/nothing")).toEqual({ kind: "not_found" });
    expect(matchRoute(routes, "GET", "/v1/work/%E0%A4%A")).toEqual({ kind: "not_found" });
  });

  it("gives a trailing *name the remainder with its own slashes", () => {
    expect(matchRoute(routes, "PUT", "/files/a/b/c/")).toMatchObject({
      kind: "matched",
      params: { id: "a", rest: "/b/c/" },
    });
    expect(matchPattern("/files/:id/*rest", "/files/a")).toEqual({ id: "a", rest: "/" });
    expect(matchPattern("/files/:id", "/files/a/b")).toBeUndefined();
  });
});
