import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseKinds } from "../support/databases.ts";
import { type Exchange, type LatestSDK, loggedSdk } from "../support/sdk/balena-sdk.ts";
import { type ClientsWorld, clientsWorld, type User } from "../support/sdk/clients-world.ts";

// Issue 47, item 3: the shipped device types whose install texts balena-sdk's own tests pin
// (tests/integration/models/device-type.spec.ts, `getInstructions`) read as balena's contracts
// (contracts/hw.device-type/<slug>/contract.json) make them: the Intel NUC's flasher steps
// (bootDeviceExternal, flashIndicator) and the Jetson Nano's jetson-flash protocol. The steps come
// from each SDK line's own balenaOS templates: the Etcher link's wording and the jetson-flash steps
// are the line's (19.7.3's jetsonFlash template has four steps, the newest one).

type Sdk = { sdk: LatestSDK; log: Exchange[] };
const nano = "Nvidia Jetson Nano SD-CARD";
const lines = {
  "balena-sdk 19.7.3": {
    make: (url: string) => loggedSdk(url) as unknown as Sdk,
    etcher: '<a href="https://etcher.balena.io/">Etcher</a>',
    jetson: [
      "Put the device in recovery mode and connect to the host computer via USB",
      `Unzip the balenaOS image and use the <a href="https://github.com/balena-os/jetson-flash">Jetson Flash tool</a> to flash the ${nano}.`,
      "Wait for writing of balenaOS to complete.",
      `Connect power to the ${nano} to boot the device.`,
    ],
  },
  "balena-sdk latest": {
    make: (url: string) => loggedSdk(url, "latest"),
    etcher: "[Etcher](https://etcher.balena.io/)",
    jetson: [
      `To provision ${nano}, follow the instructions using our [Jetson Flash tool](https://github.com/balena-os/jetson-flash/blob/master/docs/jetson-nano.md) to make the process more streamlined.`,
    ],
  },
};

/** balena-sdk's device-type.spec.ts expectations, with the line's template wording. */
const expected = (etcher: string, jetson: string[]): Record<string, { method: string; steps: string[] }> => ({
  "raspberry-pi2": {
    method: "externalBoot",
    steps: [
      "Insert the SD card to the host machine.",
      `Write the balenaOS file you downloaded to the SD card. We recommend using ${etcher}.`,
      "Wait for writing of balenaOS to complete.",
      "Remove the SD card from the host machine.",
      "Insert the freshly flashed SD card into the Raspberry Pi 2.",
      "Connect power to the Raspberry Pi 2 to boot the device.",
    ],
  },
  "intel-nuc": {
    method: "externalFlash",
    steps: [
      "Insert the USB key to the host machine.",
      `Write the balenaOS file you downloaded to the USB key. We recommend using ${etcher}.`,
      "Wait for writing of balenaOS to complete.",
      "Remove the USB key from the host machine.",
      "Insert the freshly flashed USB key into the Intel NUC.",
      '<strong role="alert">Warning!</strong> This will also completely erase internal storage medium, so please make a backup first.',
      "Ensure there are no other USB keys are inserted. Power on the Intel NUC with a keyboard connected. Press the F10 key while BIOS is loading to enter the boot menu. Select the USB key from the boot menu.",
      "Wait for the Intel NUC to finish flashing and shutdown. Please wait until all LEDs are off.",
      "Remove the USB key from the Intel NUC.",
      "Power up the Intel NUC to boot the device.",
    ],
  },
  "jetson-nano": { method: "jetsonFlash", steps: jetson },
});

describe.each(databaseKinds)("balena's device-type texts on %s", (kind) => {
  let world: ClientsWorld;
  let alice: User;

  beforeAll(async () => {
    world = await clientsWorld(kind);
    alice = await world.user("texts-alice");
  });
  afterAll(() => world?.close());

  describe.each(Object.entries(lines))("%s", (_line, { make, etcher, jetson }) => {
    it("getInstallMethod and getInstructions, by slug and by contract, give balena-sdk's own expectations", async () => {
      const { sdk } = make(world.server.url);
      await sdk.auth.loginWithToken(alice.token);
      for (const [slug, { method, steps }] of Object.entries(expected(etcher, jetson))) {
        expect(await sdk.models.deviceType.getInstallMethod(slug), slug).toBe(method);
        expect(await sdk.models.deviceType.getInstructions(slug), slug).toEqual(steps);
        const { contract } = await sdk.models.deviceType.get(slug, { $select: "contract" });
        expect(await sdk.models.deviceType.getInstructions(contract as never), slug).toEqual(steps);
      }
      const pi2 = await sdk.models.deviceType.getInterpolatedPartials("Raspberry Pi 2");
      expect(pi2.partials?.bootDevice).toEqual(["Connect power to the Raspberry Pi 2"]);
    });
  });

  it("the two contracts carry balena's names, partials and flash protocol", async () => {
    const read = async (slug: string) => {
      const reply = await world.send(
        "GET",
        `/v6/device_type(slug='${slug}')?$select=contract`,
        undefined,
        alice.token,
      );
      return (reply.body as { d: { contract: Record<string, unknown> }[] }).d[0]?.contract;
    };
    expect(await read("intel-nuc")).toMatchObject({
      name: "Intel NUC",
      data: { media: { defaultBoot: "internal", altBoot: ["usb_mass_storage"] } },
      partials: {
        bootDeviceExternal: [
          "Ensure there are no other USB keys are inserted.",
          "Power on the {{name}} with a keyboard connected.",
          "Press the F10 key while BIOS is loading to enter the boot menu.",
          "Select the USB key from the boot menu.",
        ],
        flashIndicator: ["all LEDs are off"],
        bootDevice: ["Power up the {{name}}"],
      },
    });
    const jetsonNano = await read("jetson-nano");
    expect(jetsonNano).toMatchObject({
      name: nano,
      data: { flashProtocol: "jetsonFlash", media: { defaultBoot: "sdcard" } },
    });
    // Its partials are balena's whole: no instructions of the catalogue's own beside them.
    expect(jetsonNano?.partials).toEqual({ bootDevice: ["Connect power to the {{name}}"] });
  });
});
