import { applicationRules } from "./application.ts";
import { commandJobRules } from "./command-job.ts";
import { deviceRules } from "./device.ts";
import { deviceTypeRules } from "./device-type.ts";
import { membershipRules } from "./membership.ts";
import {
  applicationTagRules,
  configVariableRules,
  deviceTagRules,
  releaseTagRules,
  variableRules,
} from "./named-values.ts";
import { organizationRules } from "./organization.ts";
import { releaseRules } from "./release.ts";
import type { ResourceRules } from "./types.ts";
import { userRules } from "./user.ts";

const rules: Record<string, ResourceRules> = {
  application: applicationRules,
  device: deviceRules,
  device_type: deviceTypeRules,
  release: releaseRules,
  organization: organizationRules,
  organization_membership: membershipRules,
  user: userRules,
  device_tag: deviceTagRules,
  application_tag: applicationTagRules,
  release_tag: releaseTagRules,
  device_environment_variable: variableRules,
  application_environment_variable: variableRules,
  device_config_variable: configVariableRules,
  application_config_variable: configVariableRules,
  command_job: commandJobRules,
};

export function rulesOf(table: string): ResourceRules {
  return rules[table] ?? {};
}
