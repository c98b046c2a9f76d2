// Module resolve hooks registered by register.mjs.
let settings;

export function initialize(data) {
  settings = data;
}

export function resolve(specifier, context, nextResolve) {
  if (specifier === "@open-managed-agents/ama-worker")
    return { url: settings.amaWorker, shortCircuit: true };
  if (specifier === "@anthropic-ai/sdk" || specifier.startsWith("@anthropic-ai/sdk/")) {
    return nextResolve(settings.packageName + specifier.slice("@anthropic-ai/sdk".length), context);
  }
  return nextResolve(specifier, context);
}
