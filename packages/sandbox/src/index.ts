export type * from "./ports.js";
export * from "./guards.js";
export * from "./readiness.js";
export * from "./hosted-inference.js";
export * from "./credential-handoff.js";
