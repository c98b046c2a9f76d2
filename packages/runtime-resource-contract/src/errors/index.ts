export * from "./error-codes.js";
export * from "./error-context.js";
export * from "./managed-runtime-error.js";
export * from "./error-classes.js";
export * from "./parse-record.js";
