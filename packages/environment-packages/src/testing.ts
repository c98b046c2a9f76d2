/**
 * Node-only helpers for tests of environment setup: local package files built without a registry or a
 * network, for pip (`--no-index --find-links`) and npm (a tarball path as the spec), in a directory a
 * confined local runtime can read.
 *
 * @module
 */
export { buildWheel, packNpmTool } from "./testing/local-packages.js";
export { PACKAGE_FILES_ROOT, createPackageFilesDir } from "./testing/package-files-dir.js";
