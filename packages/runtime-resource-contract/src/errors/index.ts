export * from "./error-codes.js";
export * from "./error-context.js";
export * from "./error-wire.js";
export * from "./error-classes.js";
export * from "./parse-record.js";
