import { type DeviceTypeState, pollIntervalRule } from "../../../src/catalogue/entry.ts";
import type { OptionGroup } from "../../../src/catalogue/schema.ts";

/** The option groups every entry has: network, then advanced (its poll interval follows the state). */
export function standardOptionGroups(state: DeviceTypeState): OptionGroup[] {
  const poll = pollIntervalRule(state);
  return [
    {
      isGroup: true,
      name: "network",
      message: "Network",
      options: [
        { message: "Network Connection", name: "network", type: "list", choices: ["ethernet", "wifi"] },
        { message: "Wifi SSID", name: "wifiSsid", type: "text", when: { network: "wifi" } },
        { message: "Wifi Passphrase", name: "wifiKey", type: "password", when: { network: "wifi" } },
      ],
    },
    {
      isGroup: true,
      isCollapsible: true,
      collapsed: true,
      name: "advanced",
      message: "Advanced",
      options: [
        {
          message: "Check for updates every X minutes",
          name: "appUpdatePollInterval",
          type: "number",
          min: poll.min,
          default: poll.default,
        },
      ],
    },
  ];
}
