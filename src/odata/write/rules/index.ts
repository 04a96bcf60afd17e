import { applicationRules } from "./application.ts";
import { deviceRules } from "./device.ts";
import { membershipRules } from "./membership.ts";
import { tagRules, variableRules } from "./named-values.ts";
import { organizationRules } from "./organization.ts";
import { releaseRules } from "./release.ts";
import type { ResourceRules } from "./types.ts";
import { userRules } from "./user.ts";

const rules: Record<string, ResourceRules> = {
  application: applicationRules,
  device: deviceRules,
  release: releaseRules,
  organization: organizationRules,
  organization_membership: membershipRules,
  user: userRules,
  device_tag: tagRules,
  application_tag: tagRules,
  device_environment_variable: variableRules,
  application_environment_variable: variableRules,
};

export function rulesOf(table: string): ResourceRules {
  return rules[table] ?? {};
}
