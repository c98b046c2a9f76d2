// The `./node` entry: helpers that need Node builtins (or Workers' `nodejs_compat`).
export * from "./node/sha256-hex-sync.js";
export * from "./node/child-environment.js";
export * from "./node/peak-rss.js";
export * from "./node/keep-alive-fetch.js";
