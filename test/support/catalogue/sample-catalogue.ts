import type { Arch, DeviceTypeState } from "../../../src/catalogue/entry.ts";
import type { CatalogueEntry, OptionGroup } from "../../../src/catalogue/schema.ts";
import { standardOptionGroups } from "./catalogue-options.ts";

interface Sketch {
  slug: string;
  name: string;
  arch: Arch;
  state: DeviceTypeState;
  aliases?: string[];
  machine: string;
  flasher?: boolean;
  extraGroups?: OptionGroup[];
  supportsBlink?: boolean;
}

function entry(sketch: Sketch): CatalogueEntry {
  const flasher = sketch.flasher ?? false;
  return {
    slug: sketch.slug,
    version: 1,
    aliases: sketch.aliases ?? [sketch.slug],
    name: sketch.name,
    arch: sketch.arch,
    state: sketch.state,
    community: false,
    private: false,
    isDependent: false,
    isDefault: sketch.slug === "raspberrypi4-64",
    supportsBlink: sketch.supportsBlink ?? true,
    instructions: flasher
      ? {
          windows: ["Write the OS file you downloaded to a USB key.", "Insert the USB key and power on."],
          osx: ["Write the OS file you downloaded to a USB key.", "Insert the USB key and power on."],
          linux: ["Write the OS file you downloaded to a USB key.", "Insert the USB key and power on."],
        }
      : ["Write the OS file you downloaded to your SD card.", "Insert the SD card and power on the device."],
    stateInstructions: {
      postProvisioning: ["The device is now provisioned; it will appear in the dashboard."],
    },
    gettingStartedLink: {
      windows: `https://docs.example.com/getting-started/${sketch.slug}/windows`,
      osx: `https://docs.example.com/getting-started/${sketch.slug}/osx`,
      linux: `https://docs.example.com/getting-started/${sketch.slug}/linux`,
    },
    yocto: {
      machine: sketch.machine,
      image: flasher ? "balena-image-flasher" : "balena-image",
      fstype: flasher ? "balenaos-img" : "balenaos-img",
      version: "yocto-kirkstone",
      deployArtifact: flasher
        ? `balena-image-flasher-${sketch.machine}.balenaos-img`
        : `balena-image-${sketch.machine}.balenaos-img`,
      ...(flasher ? { deployFlasherArtifact: `balena-image-flasher-${sketch.machine}.balenaos-img` } : {}),
      compressed: true,
    },
    options: [...standardOptionGroups(sketch.state), ...(sketch.extraGroups ?? [])],
    configuration: { config: { partition: flasher ? { primary: 4, logical: 1 } : 1, path: "/config.json" } },
    initialization: {
      options: [{ message: "Select a drive", type: "drive", name: "drive" }],
      operations: [{ command: "burn" }],
    },
    buildId: `${sketch.slug}-build-1`,
    logoUrl: `https://assets.example.com/device-types/${sketch.slug}.svg`,
  };
}

const processorGroup: OptionGroup = {
  isGroup: true,
  name: "processorType",
  message: "Processor",
  options: [{ message: "Processor", name: "processorType", type: "list", choices: ["Z7010", "Z7020"] }],
};

/** A made-up catalogue for the tests: at least one entry for every architecture, state and form of a member. */
export const sampleCatalogue: CatalogueEntry[] = [
  entry({
    slug: "raspberrypi4-64",
    name: "Raspberry Pi 4 (using 64bit OS)",
    arch: "aarch64",
    state: "RELEASED",
    machine: "raspberrypi4-64",
  }),
  entry({
    slug: "raspberrypi3",
    name: "Raspberry Pi 3",
    arch: "armv7hf",
    state: "RELEASED",
    aliases: ["raspberrypi3", "raspberry-pi3"],
    machine: "raspberrypi3",
  }),
  entry({
    slug: "raspberry-pi",
    name: "Raspberry Pi (v1 / Zero / Zero W)",
    arch: "rpi",
    state: "RELEASED",
    aliases: ["raspberry-pi", "raspberrypi"],
    machine: "raspberrypi",
  }),
  entry({
    slug: "intel-nuc",
    name: "Intel NUC",
    arch: "amd64",
    state: "RELEASED",
    aliases: ["intel-nuc", "nuc"],
    machine: "genericx86-64",
    flasher: true,
  }),
  entry({
    slug: "jetson-orin-nano-devkit-nvme",
    name: "Jetson Orin Nano 8GB (SD) Devkit NVME",
    arch: "aarch64",
    state: "NEW",
    machine: "jetson-orin-nano-devkit-nvme",
    supportsBlink: false,
  }),
  entry({
    slug: "qemux86",
    name: "QEMU X86 32bit",
    arch: "i386",
    state: "EXPERIMENTAL",
    machine: "qemux86",
    flasher: true,
    supportsBlink: false,
  }),
  entry({
    slug: "ts7700",
    name: "Technologic TS-7700",
    arch: "armv5e",
    state: "DISCONTINUED",
    machine: "ts7700",
  }),
  entry({
    slug: "zynq-xz702",
    name: "Xilinx ZYNQ ZC702",
    arch: "armv7hf",
    state: "DEVELOPMENT",
    machine: "zynq-xz702",
    extraGroups: [processorGroup],
  }),
  entry({
    slug: "beaglebone-black",
    name: "BeagleBone Black",
    arch: "armv7hf",
    state: "DISCONTINUED",
    machine: "beaglebone",
    flasher: true,
  }),
];
