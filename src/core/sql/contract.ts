import { type Fragment, sql } from "../../db/sql.ts";

/**
 * balena's hw.device-type contract of a device type, built from its catalogue entry (the
 * device-type.json document in the hidden column `catalogue`) and its columns. What an entry does
 * not say (hdmi, bluetooth) is left out rather than guessed, except the boot
 * media balena-sdk needs to choose install instructions, and the partials those instructions name:
 *   - an entry with a flasher image installs to internal storage from a USB stick
 *     (defaultBoot "internal", altBoot ["usb_mass_storage"], storage.internal true);
 *   - a QEMU machine boots its image as it is (defaultBoot "image");
 *   - any other boots from the SD card the image is written to (defaultBoot "sdcard").
 * An entry's `contract` member carries balena's own texts where the derived ones are not balena's:
 * its `partials` replace the derived partials whole, its `flashProtocol` joins `data`.
 * Every step is total on any JSON (a missing or odd member reads as absent), so reading a contract
 * cannot fail.
 */
export function deviceTypeContract(row: Fragment, arch: Fragment): Fragment {
  const entry = sql`${row}."catalogue"`;
  const flasher = sql`((${entry} #> '{yocto,deployFlasherArtifact}') IS NOT NULL)`;
  const qemu = sql`starts_with(coalesce(${entry} #>> '{yocto,machine}', ''), 'qemu')`;
  const media = sql`CASE WHEN ${flasher} THEN '{"defaultBoot": "internal", "altBoot": ["usb_mass_storage"]}'::jsonb
    WHEN ${qemu} THEN '{"defaultBoot": "image"}'::jsonb ELSE '{"defaultBoot": "sdcard"}'::jsonb END`;
  // Wi-Fi is one of the network connections its configuration offers.
  const wifi = sql`jsonb_path_exists(${entry}, '$.options[*].options[*] ? (@.name == "network").choices[*] ? (@ == "wifi")', '{}', true)`;
  const aliases = sql`CASE WHEN jsonb_typeof(${entry} -> 'aliases') = 'array' THEN ${entry} -> 'aliases' ELSE '[]'::jsonb END`;
  const logo = sql`CASE WHEN ${row}."logo" IS NULL THEN '{}'::jsonb
    ELSE jsonb_build_object('logo', jsonb_build_object('url', ${row}."logo", 'name', 'logo')) END`;
  const own = sql`(${entry} -> 'contract')`;
  const flashProtocol = sql`CASE WHEN jsonb_typeof(${own} -> 'flashProtocol') = 'string'
    THEN jsonb_build_object('flashProtocol', ${own} -> 'flashProtocol') ELSE '{}'::jsonb END`;
  const data = sql`(jsonb_build_object(
    'arch', ${arch},
    'led', coalesce(${entry} -> 'supportsBlink' = 'true'::jsonb, false),
    'connectivity', jsonb_build_object('wifi', ${wifi}),
    'storage', jsonb_build_object('internal', ${flasher}),
    'media', ${media},
    'is_private', ${row}."is_private") || ${flashProtocol})`;
  // The templated partials balena-sdk interpolates (getInstructions): balenaOS' install steps for the
  // contract's install method name the device type's own (balena-sdk models/balenaos-contract.ts).
  // An image boots as the entry's instructions say; a flasher boots from the USB key, installs
  // and powers off (externalFlash); an SD card type boots from the card (externalBoot). The texts
  // follow balena's contracts (contracts/hw.device-type/*/contract.json) for such boards.
  const instructions = sql`CASE WHEN jsonb_typeof(${entry} -> 'instructions') = 'array'
      THEN jsonb_build_object('instructions', ${entry} -> 'instructions') ELSE '{}'::jsonb END`;
  const bootPartials = sql`CASE WHEN ${flasher} THEN '{
      "bootDeviceExternal": ["Power up the {{name}} with the {{resolveContractAlias data.media.altBoot.[0]}} inserted. You may need to select it in the boot menu."],
      "flashIndicator": ["the {{name}} has powered off"],
      "bootDevice": ["Power up the {{name}}"]}'::jsonb
    WHEN ${qemu} THEN '{}'::jsonb ELSE '{"bootDevice": ["Connect power to the {{name}}"]}'::jsonb END`;
  const partials = sql`CASE WHEN jsonb_typeof(${own} -> 'partials') = 'object' THEN ${own} -> 'partials'
    ELSE ${instructions} || ${bootPartials} END`;
  return sql`jsonb_build_object(
    'slug', ${row}."slug",
    'version', coalesce(${entry} ->> 'version', '1'),
    'type', 'hw.device-type',
    'aliases', ${aliases},
    'name', ${row}."name",
    'assets', ${logo},
    'data', ${data},
    'partials', ${partials})`;
}
