/**
 * A reference managed-runtime driver that passes the whole conformance suite: small in-memory ports
 * over local-subprocess runtimes. It has NO isolation boundary and loads only when `NODE_ENV` is `test`.
 *
 * @module
 */
export {
  type ReferenceManagedRuntimeDriver,
  createReferenceManagedRuntimeDriver,
  createManagedRuntimeProviderDriver,
} from "./reference-driver.js";
export { REFERENCE_PROVIDER, type ReferenceDriverOptions } from "./reference-options.js";
export {
  SIMULATED_EGRESS_CAPABILITIES,
  type SimulatedEgressState,
} from "./reference-egress-port.js";
