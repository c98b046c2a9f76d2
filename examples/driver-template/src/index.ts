import type { ManagedRuntimeProviderDriverPort } from "@open-managed-agents/runtime-resource-contract";
import { createTemplateManagedRuntime } from "./driver.js";
import type { TemplateDriverOptions } from "./options.js";

export { createTemplateManagedRuntime } from "./driver.js";
export { TEMPLATE_PROVIDER, type TemplateDriverOptions } from "./options.js";

/**
 * The loader entry: `loadManagedRuntimeProviderDriver({provider: "driver-template", moduleSpecifier:
 * "@open-managed-agents/driver-template", factoryOptions})` and `oma-conformance` call it.
 */
export function createManagedRuntimeProviderDriver(
  factoryOptions: TemplateDriverOptions,
): ManagedRuntimeProviderDriverPort {
  return createTemplateManagedRuntime(factoryOptions);
}
