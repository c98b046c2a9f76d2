import type { R2Bucket } from "@cloudflare/workers-types/index";
import { expectTypeOf, test } from "vitest";
import { type R2BucketLike, createR2BindingBlobStore } from "../src/r2/index.js";

test("a Workers R2Bucket binding satisfies the adapter's structural type", () => {
  expectTypeOf<R2Bucket>().toExtend<R2BucketLike>();
  expectTypeOf((bucket: R2Bucket) => createR2BindingBlobStore(bucket)).toBeFunction();
});
