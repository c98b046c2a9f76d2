import type { CloudflareCredentialVault } from "../egress/credential-vault.js";
import {
  CREDENTIAL_EGRESS_HANDLER,
  REVOKED_EGRESS_HANDLER,
  credentialEgressParamsSchema,
} from "../egress/outbound-names.js";

/** Context `@cloudflare/containers` passes an outbound handler. */
export interface OutboundHandlerContext {
  readonly containerId: string;
  readonly className: string;
  readonly params?: unknown;
}

/** An outbound handler as `@cloudflare/containers` 0.3 calls it, in the Worker, for each intercepted request. */
export type OutboundHandler<Env> = (
  request: Request,
  env: Env,
  context: OutboundHandlerContext,
) => Promise<Response>;

/** Options of {@link createCredentialEgressOutboundHandlers}. */
export interface CredentialEgressOutboundOptions<Env> {
  /** The vault, built from the Worker environment of the intercepting isolate. */
  readonly vault: (env: Env) => CloudflareCredentialVault;
  /** Upstream fetch. @default globalThis.fetch */
  readonly fetch?: (request: Request, env: Env) => Promise<Response>;
}

/** Headers a guest may not choose for an upstream request. */
const STRIPPED_HEADERS = [
  "proxy-authorization",
  "proxy-connection",
  "cf-connecting-ip",
  "x-forwarded-for",
];

function refuse(status: number, code: string, url: URL | null): Response {
  return new Response(JSON.stringify({ error: code, ...(url ? { host: url.host } : {}) }), {
    status,
    headers: { "content-type": "application/json", "x-oma-egress": code },
  });
}

/**
 * The outbound handlers of the credential egress path, to install on the application's `Sandbox`
 * subclass with {@link installCredentialEgress}. The credential handler forwards requests to the
 * control-plane origin unchanged, asks the vault about every other request and either refuses it (403)
 * or forwards it with the vault's headers set; the container never sees those headers. Any vault
 * failure refuses (502): egress fails closed.
 */
export function createCredentialEgressOutboundHandlers<Env>(
  options: CredentialEgressOutboundOptions<Env>,
): Record<string, OutboundHandler<Env>> {
  const upstream = options.fetch ?? ((request: Request) => fetch(request));
  const credentialHandler: OutboundHandler<Env> = async (request, env, context) => {
    const params = credentialEgressParamsSchema.safeParse(context.params);
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return refuse(400, "egress_bad_request", null);
    }
    if (!params.success) return refuse(403, "egress_not_configured", url);
    if (url.protocol !== "http:" && url.protocol !== "https:")
      return refuse(403, "egress_protocol_refused", url);
    const headers = new Headers(request.headers);
    for (const name of STRIPPED_HEADERS) headers.delete(name);
    if (params.data.controlPlaneOrigin !== null && url.origin === params.data.controlPlaneOrigin) {
      return upstream(new Request(request, { headers }), env);
    }
    let decision;
    try {
      decision = await options
        .vault(env)
        .resolve({ bindingId: params.data.bindingId, url, method: request.method });
    } catch {
      return refuse(502, "egress_vault_unavailable", url);
    }
    if (decision.type !== "forward") return refuse(403, "egress_denied", url);
    for (const [name, value] of Object.entries(decision.headers)) headers.set(name, value);
    return upstream(new Request(request, { headers }), env);
  };
  const revokedHandler: OutboundHandler<Env> = async (request) => {
    let url: URL | null = null;
    try {
      url = new URL(request.url);
    } catch {
      // A malformed URL is refused like any other request.
    }
    return refuse(403, "egress_revoked", url);
  };
  return {
    [CREDENTIAL_EGRESS_HANDLER]: credentialHandler,
    [REVOKED_EGRESS_HANDLER]: revokedHandler,
  };
}

/** Refuses everything: the default of a container no binding is attached to. */
export const denyAllOutbound: OutboundHandler<unknown> = async (request) => {
  let url: URL | null = null;
  try {
    url = new URL(request.url);
  } catch {
    // Refused below either way.
  }
  return refuse(403, "egress_denied", url);
};

/**
 * The static members of a `@cloudflare/containers` class that outbound interception reads (typed loosely:
 * the setters store any handler record under the class's name).
 */
export interface OutboundInterceptingClass {
  outboundHandlers?: unknown;
  outbound?: unknown;
}

/**
 * Installs the credential egress handlers on the application's `Sandbox` subclass, plus a refuse-all
 * catch-all (`outbound`), through the class's static setters (class-field syntax would bypass the
 * registry they write to). Call it at module top level so every isolate that loads the Worker has them.
 * The subclass must also set `enableInternet = false` and `interceptHttps = true`.
 */
export function installCredentialEgress<Env>(
  sandboxClass: OutboundInterceptingClass,
  options: CredentialEgressOutboundOptions<Env>,
): void {
  sandboxClass.outboundHandlers = createCredentialEgressOutboundHandlers(options);
  sandboxClass.outbound = denyAllOutbound;
}
