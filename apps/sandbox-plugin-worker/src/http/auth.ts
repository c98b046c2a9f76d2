import { UnauthorizedError } from "@open-managed-agents/runtime-resource-contract";
import {
  type TokenCrypto,
  bearerMatches,
  bearerRefusal,
} from "@open-managed-agents/runtime-utils/http";

export { type TokenCrypto, bearerMatches };

/** Throws `unauthorized` unless the request carries `Authorization: Bearer <token>`. */
export async function requireBearer(
  request: Request,
  expected: string,
  tokenCrypto: TokenCrypto,
): Promise<void> {
  const reason = await bearerRefusal(request.headers.get("Authorization"), expected, tokenCrypto);
  if (reason === null) return;
  throw new UnauthorizedError({
    message: `the request is not authorized: ${reason}`,
    context: { reason },
  });
}
