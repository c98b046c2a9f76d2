/** Provider id of this driver: every lease, handle, descriptor and catalog row says `cloudflare`. */
export const CLOUDFLARE_PROVIDER = "cloudflare";

/** Version the descriptor reports. */
export const CLOUDFLARE_DRIVER_VERSION = "0.1.0";
