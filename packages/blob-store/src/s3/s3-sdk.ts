import { InvalidConfigError } from "@open-managed-agents/runtime-resource-contract";

/** The AWS SDK's S3 module. */
export type S3Sdk = typeof import("@aws-sdk/client-s3");

let loading: Promise<S3Sdk> | undefined;

/**
 * `@aws-sdk/client-s3`, imported once, on the first call of an S3 store rather than with this package:
 * loading it grows a Node process's resident memory (docs/blob-store.md says by how much), which a host
 * that imports the S3 entry (a driver whose options may name an R2 bucket) but never calls S3 should not
 * carry. Without the package installed, every call fails with `invalid_config` naming it.
 */
export function loadS3Sdk(): Promise<S3Sdk> {
  loading ??= import("@aws-sdk/client-s3").catch((cause: unknown) => {
    throw new InvalidConfigError({
      message: "the S3 blob store needs the @aws-sdk/client-s3 package",
      cause,
      context: { package: "@aws-sdk/client-s3" },
    });
  });
  return loading;
}
