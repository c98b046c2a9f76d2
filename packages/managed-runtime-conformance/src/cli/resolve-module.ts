import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { DriverLoadFailedError } from "@open-managed-agents/runtime-resource-contract";
import * as z from "zod";

const exportTargetSchema: z.ZodType<unknown> = z.union([
  z.string(),
  z.record(
    z.string(),
    z.lazy(() => exportTargetSchema),
  ),
  z.null(),
]);
const manifestSchema = z.object({
  name: z.string().optional(),
  main: z.string().optional(),
  exports: z.union([z.string(), z.record(z.string(), exportTargetSchema)]).optional(),
});

/**
 * Resolves a driver module specifier the way the deployer means it: a path is relative to `cwd`; a
 * package name is looked up from `cwd` upwards (the package itself, then `node_modules`), honouring the
 * `import` condition of its `exports`. Returns a `file:` URL for `import()`.
 */
export function resolveDriverModule(specifier: string, cwd: string): string {
  if (specifier.startsWith("file:")) return specifier;
  if (specifier.startsWith(".") || isAbsolute(specifier))
    return pathToFileURL(resolve(cwd, specifier)).href;
  const parts = specifier.split("/");
  const nameLength = specifier.startsWith("@") ? 2 : 1;
  const name = parts.slice(0, nameLength).join("/");
  const subpath = parts.length > nameLength ? `./${parts.slice(nameLength).join("/")}` : ".";
  const root = findPackageRoot(name, cwd);
  const manifest = manifestSchema.parse(
    JSON.parse(readFileSync(join(root, "package.json"), "utf8")),
  );
  const target = exportTarget(manifest, subpath);
  if (target === null) {
    throw new DriverLoadFailedError({
      message: `${name} does not export ${subpath} for import`,
      context: { moduleSpecifier: specifier },
    });
  }
  return pathToFileURL(join(root, target)).href;
}

function findPackageRoot(name: string, cwd: string): string {
  for (let directory = resolve(cwd); ; directory = dirname(directory)) {
    const own = join(directory, "package.json");
    if (
      existsSync(own) &&
      manifestSchema.safeParse(JSON.parse(readFileSync(own, "utf8"))).data?.name === name
    )
      return directory;
    const installed = join(directory, "node_modules", name);
    if (existsSync(join(installed, "package.json"))) return installed;
    if (dirname(directory) === directory) break;
  }
  throw new DriverLoadFailedError({
    message: `cannot find package ${name} from ${cwd}; install it or pass a path`,
    context: { moduleSpecifier: name },
  });
}

function exportTarget(manifest: z.infer<typeof manifestSchema>, subpath: string): string | null {
  const { exports } = manifest;
  if (exports === undefined) return subpath === "." ? (manifest.main ?? "index.js") : subpath;
  if (typeof exports === "string") return subpath === "." ? exports : null;
  // An exports object is either a map of subpaths ("./x") or, for the root alone, a map of conditions.
  const isSubpathMap = Object.keys(exports).some((key) => key.startsWith("."));
  if (!isSubpathMap) return subpath === "." ? pickCondition(exports) : null;
  return pickCondition(exports[subpath]);
}

function pickCondition(entry: unknown): string | null {
  if (typeof entry === "string") return entry;
  if (typeof entry !== "object" || entry === null) return null;
  const record = entry as Record<string, unknown>;
  for (const condition of ["import", "node", "default"]) {
    const found = pickCondition(record[condition]);
    if (found !== null) return found;
  }
  return null;
}
