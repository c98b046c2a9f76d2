/**
 * What the local container server and the workerd shim agree on beyond the control API itself. No Node
 * APIs: the shim bundles this into Workers.
 */

/** Request header naming the container a call is for; the shim adds it to every call. */
export const CONTAINER_ID_HEADER = "X-Oma-Container-Id";
/**
 * Request header carrying `Bearer <control token>`: the per-launch secret every call to the server must
 * present. Not `Authorization`, which belongs to the control API calls the shim forwards unchanged.
 */
export const CONTROL_TOKEN_HEADER = "X-Oma-Control-Token";
/** Response header set to `missing` when a call names a container the server does not have. */
export const CONTAINER_STATE_HEADER = "X-Oma-Container-State";
/** Path prefix of the server's own container lifecycle routes (not part of the control API). */
export const ADMIN_PREFIX = "/__oma/containers";
/** Port the Sandbox control API listens on inside a real container; the only port the shim serves. */
export const CONTROL_PORT = 3000;
/**
 * Admin sub-path of a container whose outbound traffic goes to its Worker: `GET …/outbound` waits for the
 * next request the container sent (200 with an {@link OutboundJob}, or 204 after a while), and
 * `POST …/outbound/<job id>` answers it with an {@link OutboundAnswer}.
 */
export const OUTBOUND_PATH = "outbound";
/**
 * `PUT …/outbound/https` with `{hosts: string[]}` sets the hosts (`*` = all) the Worker intercepts HTTPS
 * for, once the container runs; the start body's `interceptHttps` sets them at start.
 */
export const OUTBOUND_HTTPS_PATH = "https";

/** One request a container sent: plain HTTP, or HTTPS the proxy decrypted (an `https://` URL); `body` is base64. */
export interface OutboundJob {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** The Worker's answer to an {@link OutboundJob}; `body` is base64. */
export interface OutboundAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}
