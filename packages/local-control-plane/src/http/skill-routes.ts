import { createError } from "@open-managed-agents/runtime-resource-contract";
import type { ControlPlaneState, Principal } from "../state/control-plane-state.js";
import { rfc3339 } from "../state/ids.js";
import type { SkillVersionRecord } from "../state/skills.js";
import { skillVersionListSchema, skillVersionSchema } from "../wire/skill-schemas.js";
import { authenticate } from "./auth.js";
import { sendJson } from "./respond.js";
import { type Route, type RouteContext, pathParam } from "./router.js";

/** Wire form of a skill version. */
export function skillVersionToWire(version: SkillVersionRecord) {
  return {
    type: "skill_version" as const,
    id: version.id,
    skill_id: version.skillId,
    name: version.name,
    description: version.description,
    created_at: rfc3339(version.createdAt),
  };
}

/** The API key, any environment key, or the sessions token of a live item whose agent carries the skill. */
function mayReadSkill(state: ControlPlaneState, principal: Principal, skillId: string): boolean {
  if (principal.kind === "api_key" || principal.kind === "environment") return true;
  const { work } = principal;
  if (work.state === "stopped" || work.data.type !== "session") return false;
  return state.sessions.get(work.data.id).skills.some((skill) => skill.skillId === skillId);
}

/** Skill version retrieve, list and content: what the SDK's worker calls to set up an agent's skills. */
export function skillRoutes(state: ControlPlaneState): Route[] {
  const open = (context: RouteContext) => {
    const principal = authenticate(state, context.token);
    if (!mayReadSkill(state, principal, pathParam(context, "skill_id")))
      throw createError("unauthorized", {
        message: "this credential does not grant access to the skill",
      });
  };
  return [
    {
      method: "GET",
      path: "/v1/skills/:skill_id/versions",
      handler: (context) => {
        open(context);
        sendJson(context.response, 200, skillVersionListSchema, {
          data: state.skills.list(pathParam(context, "skill_id")).map(skillVersionToWire),
          next_page: null,
        });
      },
    },
    {
      method: "GET",
      path: "/v1/skills/:skill_id/versions/:version/content",
      handler: (context) => {
        open(context);
        const version = state.skills.get(
          pathParam(context, "skill_id"),
          pathParam(context, "version"),
        );
        context.response.writeHead(200, {
          "content-type": "application/octet-stream",
          "content-length": version.archive.length,
        });
        context.response.end(version.archive);
      },
    },
    {
      method: "GET",
      path: "/v1/skills/:skill_id/versions/:version",
      handler: (context) => {
        open(context);
        sendJson(
          context.response,
          200,
          skillVersionSchema,
          skillVersionToWire(
            state.skills.get(pathParam(context, "skill_id"), pathParam(context, "version")),
          ),
        );
      },
    },
  ];
}
