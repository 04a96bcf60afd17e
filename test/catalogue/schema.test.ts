import { describe, expect, it } from "vitest";
import { configDocumentSchema } from "../../src/catalogue/document.ts";
import { parseCatalogueFile } from "../../src/catalogue/parse-file.ts";
import { type CatalogueEntry, catalogueEntrySchema } from "../../src/catalogue/schema.ts";
import { minimalEntry, sampleCopy, setAt } from "../support/catalogue/catalogue-fixture.ts";
import { standardOptionGroups } from "../support/catalogue/catalogue-options.ts";
import { sampleCatalogue } from "../support/catalogue/sample-catalogue.ts";

/** The message of the error the file raises. */
function problemsOf(file: unknown): string {
  try {
    parseCatalogueFile(file);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("the file was accepted");
}

const everyOptionalMember: CatalogueEntry = {
  ...minimalEntry("full-board"),
  community: true,
  private: false,
  isDependent: false,
  isDefault: false,
  supportsBlink: true,
  instructions: ["Write the image to <strong>an SD card</strong>."],
  stateInstructions: { postProvisioning: ["Remove the USB key."] },
  imageDownloadAlerts: [
    { type: "warning", message: "Needs a recent bootloader." },
    { type: "danger", message: "Erases the eMMC." },
  ],
  gettingStartedLink: {
    windows: "https://docs.example.com/w",
    osx: "https://docs.example.com/o",
    linux: "https://docs.example.com/l",
  },
  yocto: {
    machine: "full",
    image: "balena-image-flasher",
    fstype: "balenaos-img",
    version: "yocto-kirkstone",
    deployArtifact: "a.img",
    deployFlasherArtifact: "f.img",
    deployRawArtifact: "r.img",
    compressed: true,
    archive: false,
  },
  options: [
    ...standardOptionGroups("RELEASED"),
    {
      isGroup: true,
      name: "core",
      message: "Core",
      isCollapsible: false,
      collapsed: false,
      options: [{ message: "Core", name: "coreType", type: "list", choices: ["a", "b"], default: "a" }],
    },
  ],
  configuration: {
    config: { partition: { primary: 4, logical: 1 }, path: "/config.json" },
    operations: [
      {
        command: "copy",
        from: { partition: 1, path: "/config.json" },
        to: { partition: { primary: 4, logical: 1 }, path: "/config.json" },
        when: { network: "wifi" },
      },
    ],
  },
  initialization: {
    options: [{ message: "Select a drive", type: "drive", name: "drive" }],
    operations: [{ command: "burn" }],
  },
  buildId: "full-board-1",
  logoUrl: "https://assets.example.com/full.svg",
};

describe("catalogue schema: accepted forms", () => {
  it("accepts the sample catalogue unchanged, entry by entry and as a list", () => {
    for (const entry of sampleCatalogue) expect(catalogueEntrySchema.parse(entry)).toEqual(entry);
    expect(parseCatalogueFile(sampleCatalogue).entries).toEqual(sampleCatalogue);
  });

  it("covers both instructions forms and both partition forms in the sample", () => {
    const instructions = sampleCatalogue.map((entry) => Array.isArray(entry.instructions));
    expect(new Set(instructions)).toEqual(new Set([true, false]));
    const partitions = sampleCatalogue.map((entry) => typeof entry.configuration?.config.partition);
    expect(new Set(partitions)).toEqual(new Set(["number", "object"]));
  });

  it("accepts an entry with every optional member absent, and one with all of them", () => {
    expect(catalogueEntrySchema.parse(minimalEntry("tiny"))).toEqual(minimalEntry("tiny"));
    expect(catalogueEntrySchema.parse(everyOptionalMember)).toEqual(everyOptionalMember);
    const byPlatform = {
      ...minimalEntry("flasher"),
      instructions: { windows: ["w"], osx: ["o"], linux: ["<b>l</b>"] },
      configuration: { config: { partition: 1, path: "/config.json" } },
    };
    expect(catalogueEntrySchema.parse(byPlatform)).toEqual(byPlatform);
  });

  it("derives the poll interval from the state: a DISCONTINUED entry polls from 0 s, by default every 1 s", () => {
    expect(() => catalogueEntrySchema.parse(minimalEntry("old", "DISCONTINUED"))).not.toThrow();
    const [network, advanced] = standardOptionGroups("RELEASED");
    const current = { ...minimalEntry("old", "DISCONTINUED"), options: [network, advanced] };
    expect(problemsOf([current])).toContain(
      "[0].options[1].options[0].min: must be 0 for a DISCONTINUED device type",
    );
  });

  it("accepts a whole document, with or without its other members", () => {
    expect(parseCatalogueFile({ deviceTypes: sampleCatalogue }).entries).toHaveLength(sampleCatalogue.length);
    const document = {
      supportedSocialProviders: ["google"],
      pubnub: { subscribe_key: "<SUBSCRIBE_KEY>", publish_key: "<PUBLISH_KEY>" },
      mixpanelToken: "<MIXPANEL_TOKEN>",
      intercomAppId: "<INTERCOM_APP_ID>",
      recurlyPublicKey: "<PUBLIC_KEY>",
      deviceUrlsBase: "devices.example.com",
      gitServerUrl: "git.example.com",
      adminUrl: "https://admin.example.com",
      debugEnabled: false,
      ga: { id: "<GA_ID>", site: "example.com" },
      deviceTypes: sampleCatalogue,
    };
    expect(configDocumentSchema.parse(document)).toEqual(document);
    expect(parseCatalogueFile(document).entries).toEqual(sampleCatalogue);
  });
});

// Each violation, made on the fourth entry (intel-nuc) of a valid file: the member set (or, with
// undefined, deleted), its new value, and the path the error must name when that is not the same.
const violations: [name: string, member: string, value: unknown, reported?: string][] = [
  ["an unknown member", "colour", "red"],
  ["a missing slug", "slug", undefined],
  ["a malformed slug", "slug", "Intel NUC"],
  ["a fractional version", "version", 1.5],
  ["an unknown architecture", "arch", "x86"],
  ["an unknown state", "state", "BETA"],
  ["a flag that is not a boolean", "isDefault", "yes"],
  ["instructions as one string", "instructions", "Flash it"],
  ["instructions without linux", "instructions", { windows: [], osx: [] }],
  ["post-provisioning text that is not a list", "stateInstructions.postProvisioning", "Done"],
  [
    "an alert of an unknown type",
    "imageDownloadAlerts",
    [{ type: "info", message: "m" }],
    "imageDownloadAlerts[0].type",
  ],
  ["a getting-started link that is not a URL", "gettingStartedLink.osx", "docs/osx"],
  ["yocto without deployArtifact", "yocto.deployArtifact", undefined],
  ["yocto compressed as a string", "yocto.compressed", "true"],
  ["a partition without logical", "configuration.config.partition", { primary: 4 }],
  ["a negative partition", "configuration.config.partition", -1],
  ["a config without path", "configuration.config.path", undefined],
  [
    "an operation other than copy",
    "configuration.operations",
    [{ command: "move", from: { partition: 1, path: "/a" }, to: { partition: 1, path: "/b" }, when: {} }],
    "configuration.operations[0].command",
  ],
  ["an initialization option that is not a drive", "initialization.options[0].type", "usb"],
  ["an initialization operation other than burn", "initialization.operations[0].command", "flash"],
  ["a group without isGroup", "options[0].isGroup", undefined],
  ["an option of an unknown type", "options[0].options[1].type", "checkbox"],
  ["a list without choices", "options[0].options[0].choices", undefined],
  ["a minimum on a text option", "options[0].options[1].min", 1],
  ["a condition that is not name/value", "options[0].options[1].when.network", ["wifi"]],
  ["a poll minimum that disagrees with the state", "options[1].options[0].min", 0],
  ["a poll default that disagrees with the state", "options[1].options[0].default", 5],
  ["no advanced group", "options", standardOptionGroups("RELEASED").slice(0, 1)],
  [
    "a network group without wifiKey",
    "options[0].options",
    standardOptionGroups("RELEASED")[0]?.options.slice(0, 2),
  ],
  ["a wifi option shown without wifi", "options[0].options[1].when", undefined],
  ["aliases without the slug", "aliases", ["nuc"]],
  ["an alias twice", "aliases[1]", "intel-nuc"],
  ["an alias of another entry", "aliases[2]", "raspberrypi4-64"],
  ["a logo that is not a URL", "logoUrl", "logo.svg"],
];

describe("catalogue schema: each violation is named by its path", () => {
  it.each(violations)("rejects %s", (_name, member, value, reported = member) => {
    const entries = sampleCopy();
    setAt(entries, `[3].${member}`, value);
    expect(problemsOf({ deviceTypes: entries })).toContain(`\n  deviceTypes[3].${reported}: `);
    // The same file as a bare list of entries names the same member.
    expect(problemsOf(entries)).toContain(`\n  [3].${reported}: `);
  });

  it("names every problem of a file, and a document's own members", () => {
    const entries = sampleCopy();
    setAt(entries, "[1].arch", "sparc");
    setAt(entries, "[5].options[1].options[0].min", 3);
    const message = problemsOf({ deviceTypes: entries, debugEnabled: "no", theme: "dark" });
    expect(message).toContain("deviceTypes[1].arch: ");
    expect(message).toContain(
      "deviceTypes[5].options[1].options[0].min: must be 10 for a EXPERIMENTAL device type",
    );
    expect(message).toContain("debugEnabled: ");
    expect(message).toContain("theme: unknown member");
  });

  it("rejects what is neither a document nor a list", () => {
    expect(problemsOf("raspberrypi3")).toMatch(/document/);
    expect(problemsOf({})).toContain("deviceTypes: ");
  });
});
