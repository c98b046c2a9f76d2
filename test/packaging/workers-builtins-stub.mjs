// Node module hooks standing in for the `cloudflare:*` builtins of the Workers runtime (workerd).
// Each stub exports exactly the names its importer asks for, as empty classes, so a Workers-only
// entry point can be linked and evaluated in Node to prove its own module graph is installed.
import { readFile } from "node:fs/promises";

const STUB = "openma-workers-stub:";

export async function resolve(specifier, context, nextResolve) {
  if (specifier.startsWith("cloudflare:")) {
    return {
      url: `${STUB}${specifier}?from=${encodeURIComponent(context.parentURL ?? "")}`,
      shortCircuit: true,
    };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith(STUB)) return nextLoad(url, context);
  const [specifier, query] = url.slice(STUB.length).split("?from=");
  const importer = await readFile(new URL(decodeURIComponent(query)), "utf8");
  const names = new Set();
  const pattern = new RegExp(
    `import\\s*\\{([^}]*)\\}\\s*from\\s*["']${specifier.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}["']`,
    "g",
  );
  for (const match of importer.matchAll(pattern)) {
    for (const part of match[1].split(",")) {
      const name = part.trim().split(/\s+as\s+/)[0];
      if (name && name !== "default") names.add(name);
    }
  }
  const source = [...names].map((name) => `export const ${name} = class ${name} {};`).join("\n");
  return { format: "module", source: `${source}\nexport default {};\n`, shortCircuit: true };
}
