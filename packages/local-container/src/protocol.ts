/**
 * What the local container server and the workerd shim agree on beyond the control API itself. No Node
 * APIs: the shim bundles this into Workers.
 */

/** Request header naming the container a call is for; the shim adds it to every call. */
export const CONTAINER_ID_HEADER = "X-Oma-Container-Id";
/** Response header set to `missing` when a call names a container the server does not have. */
export const CONTAINER_STATE_HEADER = "X-Oma-Container-State";
/** Path prefix of the server's own container lifecycle routes (not part of the control API). */
export const ADMIN_PREFIX = "/__oma/containers";
/** Port the Sandbox control API listens on inside a real container; the only port the shim serves. */
export const CONTROL_PORT = 3000;
