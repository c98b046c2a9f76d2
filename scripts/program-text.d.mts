import type { BuildOptions, BuildResult, Plugin } from "esbuild";

type Build = (options: BuildOptions & { write: false }) => Promise<BuildResult<{ write: false }>>;
interface VitePlugin {
  readonly name: string;
}

export declare const PROGRAM_BUNDLE_OPTIONS: Readonly<BuildOptions>;
export declare function bundleProgram(build: Build, entry: string): Promise<string>;
export declare function programTextEsbuildPlugin(): Plugin;
export declare function shellTextTsupOptions(): { loader: Record<string, "text"> };
export declare function programTextTsupOptions(): {
  loader: Record<string, "text">;
  esbuildPlugins: Plugin[];
};
export declare function programTextVitePlugin(build: Build): VitePlugin;
export declare function shellTextVitePlugin(): VitePlugin;
