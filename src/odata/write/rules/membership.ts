import { BadRequest } from "../../../errors.ts";
import type { ResourceRules } from "./types.ts";

const roles = new Set(["owner", "member"]);

export const membershipRules: ResourceRules = {
  coercions: {
    role: (value) => {
      if (typeof value === "string" && !roles.has(value))
        throw new BadRequest("'role' must be owner or member");
      return value;
    },
  },
};
