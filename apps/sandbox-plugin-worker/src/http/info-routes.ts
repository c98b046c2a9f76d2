import { instanceTypeLabel, resourcesOf } from "../config/instance-types.js";
import {
  ADAPTER_NAME,
  API_PREFIX,
  CAPABILITIES,
  SDK_PACKAGE,
  UNSUPPORTED_CAPABILITIES,
} from "../protocol/constants.js";
import { openApiDocument } from "../protocol/openapi.js";
import type { Info } from "../protocol/schemas.js";
import { jsonResponse } from "./responses.js";
import type { RouteContext } from "./router.js";

/** `GET /info`: protocol version, capabilities, templates and their instance types, limits. */
export async function info(context: RouteContext): Promise<Response> {
  const images = [...new Set(context.config.classes.map((entry) => entry.image))];
  const body: Info = {
    protocol: 1,
    adapter: ADAPTER_NAME,
    sdk: SDK_PACKAGE,
    isolation: "microvm",
    capabilities: [...CAPABILITIES],
    unsupported: [...UNSUPPORTED_CAPABILITIES],
    templates: images.map((image) => ({
      image,
      instanceTypes: context.config.classes
        .filter((entry) => entry.image === image)
        .map((entry) => ({
          name: instanceTypeLabel(entry.instanceType),
          ...resourcesOf(entry.instanceType),
        })),
    })),
    limits: {
      defaultTtlSeconds: context.config.defaultTtlSeconds,
      maxTtlSeconds: context.config.maxTtlSeconds,
      maxFileBytes: context.config.maxFileBytes,
    },
    ports: { route: `${API_PREFIX}/sandboxes/{id}/ports/{port}/{path}` },
  };
  return jsonResponse(200, body);
}

/** `GET /openapi.json`: the OpenAPI 3.1 description of every route. */
export async function openApi(): Promise<Response> {
  return jsonResponse(200, openApiDocument());
}
