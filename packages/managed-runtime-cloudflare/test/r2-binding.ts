/** The shape check of an R2 binding only looks at its methods; this object has them and nothing else. */
export function r2BindingShape(): Record<string, () => Promise<null>> {
  const none = async (): Promise<null> => null;
  return {
    head: none,
    put: none,
    get: none,
    delete: none,
    list: none,
    createMultipartUpload: none,
    resumeMultipartUpload: none,
  };
}
