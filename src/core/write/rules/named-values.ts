import { BadRequest } from "../../../errors.ts";
import type { ResourceRules } from "./types.ts";

// Environment variable names as a shell accepts them.
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function checked(field: string, check: (value: string) => void): ResourceRules {
  return {
    coercions: {
      [field]: (value: unknown) => {
        if (typeof value === "string") check(value);
        return value;
      },
    },
  };
}

// balena's tag key rules and messages (open-balena-api src/features/tags/validation.ts), checked in
// its order; an empty key breaks its model's rule (src/balena.sbvr), quoted as pinejs quotes a rule.
const RESERVED_NAMESPACES = ["io.resin.", "io.balena."];

function tagRules(resource: "device" | "application" | "release"): ResourceRules {
  return checked("tag_key", (key) => {
    if (/\s/.test(key)) throw new BadRequest("Tag keys cannot contain whitespace.");
    for (const namespace of RESERVED_NAMESPACES) {
      if (key.startsWith(namespace))
        throw new BadRequest(`Tag keys beginning with ${namespace} are reserved.`);
    }
    if (key.length === 0) {
      throw new BadRequest(
        `It is necessary that each ${resource} tag has a tag key that has a Length (Type) that is greater than 0.`,
      );
    }
  });
}

export const deviceTagRules = tagRules("device");
export const applicationTagRules = tagRules("application");
export const releaseTagRules = tagRules("release");

// balena's configuration variable rules and messages (open-balena-api
// src/features/vars-schema/env-vars.ts checkConfigVarNameValidity and checkEnvVarValueValidity, run by
// hooks/config-var-validation.ts on POST, PATCH and PUT), checked in its order. A name such as
// BALENA_HOST_CONFIG_gpu_mem needs no schema entry: balena validates names, not a list.
const CONFIG_VARIABLE_NAMESPACES = ["RESIN_", "BALENA_"];
const RESERVED_VARIABLE_NAMES = ["RESIN", "BALENA", "USER"];
const INVALID_CONFIG_VARIABLE_NAME = /^[\d:]|[^A-Za-z0-9_:]/;

export const configVariableRules: ResourceRules = {
  coercions: {
    ...checked("name", (name) => {
      if (INVALID_CONFIG_VARIABLE_NAME.test(name))
        throw new BadRequest(
          "Configuration variable names can only contain alphanumeric characters, underscores or a colon",
        );
      if (RESERVED_VARIABLE_NAMES.includes(name))
        throw new BadRequest(`Configuration variables ${RESERVED_VARIABLE_NAMES.join(", ")} are reserved`);
      if (!CONFIG_VARIABLE_NAMESPACES.some((namespace) => name.startsWith(namespace)))
        throw new BadRequest(
          `Configuration variables must be part of one of the following namespaces: ${CONFIG_VARIABLE_NAMESPACES.join(", ")}`,
        );
    }).coercions,
    ...checked("value", (value) => {
      if (/\r|\n/.test(value)) throw new BadRequest("Variable values cannot contain line break characters");
    }).coercions,
  },
};

export const variableRules = checked("name", (name) => {
  if (!VARIABLE_NAME.test(name))
    throw new BadRequest(
      "'name' must start with a letter or underscore and hold only letters, digits and underscores",
    );
});
