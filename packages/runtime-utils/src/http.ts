// The `./http` entry: plumbing of the HTTP front doors (Workers and Node alike).
export * from "./http/bearer.js";
export * from "./http/match-route.js";
