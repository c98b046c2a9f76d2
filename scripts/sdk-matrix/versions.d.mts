/** One SDK of the test matrix. */
export interface SdkMatrixEntry {
  readonly name: "lowest" | "newest";
  readonly packageName: string;
}
export declare const SDK_MATRIX: readonly SdkMatrixEntry[];
export declare function sdkUnderTest(
  env?: Readonly<Record<string, string | undefined>>,
): SdkMatrixEntry;
export declare function installedSdkVersion(entry: SdkMatrixEntry, directory?: string): string;
export declare const WORKSPACE_ROOT: string;
export declare function amaWorkerBuild(entry: SdkMatrixEntry): string;
