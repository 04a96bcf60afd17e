import type { z } from "zod";
import { type DeviceTypeState, pollIntervalRule } from "./entry.ts";

// Rules across members of one option or one entry, which the shapes in schema.ts cannot say.
// Each issue carries the path of the member at fault, relative to the object being checked.

interface Option {
  readonly name: string;
  readonly type: "list" | "text" | "password" | "number";
  readonly choices?: readonly string[] | undefined;
  readonly when?: Readonly<Record<string, string | number | boolean>> | undefined;
  readonly min?: number | undefined;
  readonly default?: string | number | boolean | undefined;
}

interface Entry {
  readonly slug: string;
  readonly aliases: readonly string[];
  readonly state: DeviceTypeState;
  readonly options: readonly { readonly name: string; readonly options: readonly Option[] }[];
}

type Path = (string | number)[];

export function checkOption(option: Option, ctx: z.RefinementCtx): void {
  const fail = (path: Path, message: string) => ctx.addIssue({ code: "custom", path, message });
  if (option.type === "list" && !option.choices) fail(["choices"], "a list option needs choices");
  if (option.type !== "list" && option.choices) fail(["choices"], `a ${option.type} option has no choices`);
  if (option.type !== "number" && option.min !== undefined)
    fail(["min"], `a ${option.type} option has no minimum`);
  const value = option.default;
  if (value === undefined) return;
  if (option.type === "number") {
    if (typeof value !== "number") fail(["default"], "must be a number");
    else if (option.min !== undefined && value < option.min)
      fail(["default"], `must be at least ${option.min}`);
  } else if (option.type === "list") {
    if (typeof value !== "string" || !option.choices?.includes(value))
      fail(["default"], "must be one of the choices");
  } else if (typeof value !== "string") fail(["default"], "must be a string");
}

/** The network group's options, as every entry has them. */
const networkOptions: readonly Pick<Option, "name" | "type" | "when">[] = [
  { name: "network", type: "list" },
  { name: "wifiSsid", type: "text", when: { network: "wifi" } },
  { name: "wifiKey", type: "password", when: { network: "wifi" } },
];

export function checkEntryRules(entry: Entry, ctx: z.RefinementCtx): void {
  const fail = (path: Path, message: string) => ctx.addIssue({ code: "custom", path, message });

  // The slug is an alias of itself: /device-types/v1/:slug finds an entry by any of them.
  if (!entry.aliases.includes(entry.slug)) fail(["aliases"], `must include the slug '${entry.slug}'`);
  entry.aliases.forEach((alias, a) => {
    if (entry.aliases.indexOf(alias) !== a) fail(["aliases", a], `'${alias}' is listed twice`);
  });

  const groups = entry.options;
  const seen = new Set<string>();
  groups.forEach((group, g) => {
    if (groups.findIndex((other) => other.name === group.name) !== g)
      fail(["options", g, "name"], `the group '${group.name}' is listed twice`);
    group.options.forEach((option, o) => {
      if (seen.has(option.name))
        fail(["options", g, "options", o, "name"], `'${option.name}' is listed twice`);
      seen.add(option.name);
    });
  });

  const network = groups.findIndex((group) => group.name === "network");
  if (network < 0) fail(["options"], "every entry has the option group 'network'");
  else {
    const options = groups[network]?.options ?? [];
    for (const expected of networkOptions) {
      const o = options.findIndex((option) => option.name === expected.name);
      const found = options[o];
      if (!found)
        fail(["options", network, "options"], `the network group has the option '${expected.name}'`);
      else if (found.type !== expected.type)
        fail(["options", network, "options", o, "type"], `must be '${expected.type}'`);
      else if (expected.when && found.when?.network !== expected.when.network)
        fail(["options", network, "options", o, "when"], `must be {"network": "wifi"}`);
      else if (expected.name === "network" && !["ethernet", "wifi"].every((c) => found.choices?.includes(c)))
        fail(["options", network, "options", o, "choices"], "must offer 'ethernet' and 'wifi'");
    }
  }

  // The poll interval is not the entry's to choose: it follows the state (entry.ts, pollIntervalRule).
  const advanced = groups.findIndex((group) => group.name === "advanced");
  if (advanced < 0) {
    fail(["options"], "every entry has the option group 'advanced'");
    return;
  }
  const options = groups[advanced]?.options ?? [];
  const o = options.findIndex((option) => option.name === "appUpdatePollInterval");
  const poll = options[o];
  if (!poll) {
    fail(["options", advanced, "options"], "the advanced group has the option 'appUpdatePollInterval'");
    return;
  }
  const rule = pollIntervalRule(entry.state);
  const at: Path = ["options", advanced, "options", o];
  if (poll.type !== "number") fail([...at, "type"], "must be 'number'");
  if (poll.min !== rule.min) fail([...at, "min"], `must be ${rule.min} for a ${entry.state} device type`);
  if (poll.default !== rule.default)
    fail([...at, "default"], `must be ${rule.default} for a ${entry.state} device type`);
}

/** Across a whole catalogue: a slug or alias names one device type. */
export function checkCatalogueRules(entries: readonly Entry[], ctx: z.RefinementCtx): void {
  const owners = new Map<string, string>();
  entries.forEach((entry, e) => {
    entry.aliases.forEach((alias, a) => {
      const owner = owners.get(alias);
      if (owner !== undefined && owner !== entry.slug)
        ctx.addIssue({
          code: "custom",
          path: [e, "aliases", a],
          message: `'${alias}' already names '${owner}'`,
        });
      else if (owner === undefined) owners.set(alias, entry.slug);
    });
  });
}
