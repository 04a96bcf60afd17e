import { BadRequest } from "../../../errors.ts";
import type { ResourceRules } from "./types.ts";

// Environment variable names as a shell accepts them; tag keys just need to say something.
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function checked(field: string, test: (value: string) => boolean, message: string): ResourceRules {
  const check = (value: unknown) => {
    if (typeof value === "string" && !test(value)) throw new BadRequest(message);
    return value;
  };
  return { coercions: { [field]: check } };
}

export const tagRules = checked("tag_key", (key) => key.trim().length > 0, "'tag_key' cannot be empty");
export const variableRules = checked(
  "name",
  (name) => VARIABLE_NAME.test(name),
  "'name' must start with a letter or underscore and hold only letters, digits and underscores",
);
