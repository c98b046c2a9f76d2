/**
 * Node-only helpers for tests of environment setup: local package files built without a registry or a
 * network, for pip (`--no-index --find-links`) and npm (a tarball path as the spec).
 *
 * @module
 */
export { buildWheel, packNpmTool } from "./testing/local-packages.js";
