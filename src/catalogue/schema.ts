import { z } from "zod";
import { architectures, deviceTypeStates, slugPattern } from "./entry.ts";
import { checkEntryRules, checkOption } from "./rules.ts";

// The one schema of a catalogue entry. Objects are strict: an unknown member is an error, never
// silently dropped, so what is imported is exactly what is served.

const text = z.string();
const texts = z.array(text);
const webUrl = z.url({ protocol: /^https?$/ });
const slug = z.string().regex(slugPattern, "must be lower-case letters, digits, '-' or '_'");
const integer = z.number().int();

/** `{network: "wifi"}`: the option (or operation) applies when each named answer has that value. */
const conditions = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

export const optionSchema = z
  .strictObject({
    message: text,
    name: text,
    type: z.enum(["list", "text", "password", "number"]),
    choices: texts.optional(),
    when: conditions.optional(),
    min: z.number().optional(),
    default: z.union([z.string(), z.number(), z.boolean()]).optional(),
  })
  .superRefine(checkOption);

export const optionGroupSchema = z.strictObject({
  isGroup: z.literal(true),
  name: text,
  message: text,
  options: z.array(optionSchema),
  isCollapsible: z.boolean().optional(),
  collapsed: z.boolean().optional(),
});

const byPlatform = <T extends z.ZodType>(member: T) =>
  z.strictObject({ windows: member, osx: member, linux: member });

const partition = z.union([
  integer.nonnegative(),
  z.strictObject({ primary: integer.nonnegative(), logical: integer.nonnegative() }),
]);
const location = z.strictObject({ partition, path: text });

const yocto = z.strictObject({
  machine: text,
  image: text,
  fstype: text,
  version: text,
  deployArtifact: text,
  deployFlasherArtifact: text.optional(),
  deployRawArtifact: text.optional(),
  compressed: z.boolean().optional(),
  archive: z.boolean().optional(),
});

const configuration = z.strictObject({
  config: location,
  operations: z
    .array(z.strictObject({ command: z.literal("copy"), from: location, to: location, when: conditions }))
    .optional(),
});

const initialization = z.strictObject({
  options: z.array(z.strictObject({ message: text, type: z.literal("drive"), name: text })),
  operations: z.array(z.strictObject({ command: z.literal("burn") })),
});

/**
 * The device type's own texts of balena's hw.device-type contract (contracts/hw.device-type/<slug>),
 * where they are not the ones fleetgate derives from the boot medium (src/core/sql/contract.ts):
 * `partials` replaces the derived partials whole; `flashProtocol` (balena's `data.flashProtocol`,
 * e.g. `jetsonFlash`, `RPIBOOT`) decides balena-sdk's install method before the boot medium does.
 */
const contract = z.strictObject({
  flashProtocol: text.min(1).optional(),
  partials: z.record(z.string(), texts).optional(),
});

export const catalogueEntrySchema = z
  .strictObject({
    slug,
    version: integer,
    aliases: z.array(slug),
    name: text.min(1),
    arch: z.enum(architectures),
    state: z.enum(deviceTypeStates),
    community: z.boolean().optional(),
    private: z.boolean().optional(),
    isDependent: z.boolean().optional(),
    isDefault: z.boolean().optional(),
    supportsBlink: z.boolean().optional(),
    instructions: z.union([texts, byPlatform(texts)]).optional(),
    stateInstructions: z.strictObject({ postProvisioning: texts }).optional(),
    imageDownloadAlerts: z
      .array(z.strictObject({ type: z.enum(["warning", "danger"]), message: text }))
      .optional(),
    gettingStartedLink: byPlatform(webUrl).optional(),
    yocto,
    options: z.array(optionGroupSchema),
    configuration: configuration.optional(),
    initialization: initialization.optional(),
    buildId: text.optional(),
    logoUrl: webUrl.optional(),
    contract: contract.optional(),
  })
  .superRefine(checkEntryRules);

export type CatalogueOption = z.infer<typeof optionSchema>;
export type OptionGroup = z.infer<typeof optionGroupSchema>;
export type CatalogueEntry = z.infer<typeof catalogueEntrySchema>;
