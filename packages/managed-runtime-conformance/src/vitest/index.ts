/**
 * The conformance suite as vitest cases. Requires `vitest` (a peer dependency).
 *
 * @module
 */
export { defineManagedRuntimeConformanceSuite } from "./define-suite.js";
export type {
  ManagedRuntimeConformanceOptions,
  ConformanceDriverModule,
  ConformanceHarnessOptions,
  ConformanceTimeouts,
} from "../runner/suite-options.js";
