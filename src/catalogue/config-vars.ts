// GET /config/vars: the constants balena's clients validate variable names against, and the JSON
// schema of the configuration variables a device type's supervisor reads (balena-sdk's
// config.getConfigVarSchema). The document is balena's (open-balena-api
// src/features/vars-schema/schema.ts and env-vars.ts); the names agree with the write core's rules
// for configuration variables (core/write/rules/named-values.ts). It holds no data of anyone's.

const RESERVED_NAMESPACES = ["RESIN_", "BALENA_"];
const withPrefixes = (names: readonly string[]) =>
  RESERVED_NAMESPACES.flatMap((prefix) => names.map((name) => prefix + name));

const onOff = (description: string, byDefault: "false" | "true") => ({
  enum: ["false", "true"],
  description,
  default: byDefault,
});

// balena's default supervisor poll interval, 10 minutes, is the least a fleet may set.
const POLL_INTERVAL_MS = 600_000;

const supervisorProperties = {
  RESIN_SUPERVISOR_CONNECTIVITY_CHECK: onOff("Enable / Disable VPN connectivity check", "true"),
  RESIN_SUPERVISOR_LOG_CONTROL: onOff("Enable / Disable logs from being sent to balena", "true"),
  RESIN_SUPERVISOR_POLL_INTERVAL: {
    type: "integer",
    description: "Define the balena API poll interval in milliseconds",
    default: POLL_INTERVAL_MS,
    minimum: POLL_INTERVAL_MS,
    maximum: 86_400_000,
  },
  RESIN_SUPERVISOR_VPN_CONTROL: onOff("Enable / Disable VPN", "true"),
  RESIN_SUPERVISOR_PERSISTENT_LOGGING: onOff(
    "Enable persistent logging. Only supported by supervisor versions >= v7.15.0.",
    "false",
  ),
  RESIN_SUPERVISOR_INSTANT_UPDATE_TRIGGER: onOff(
    "Enable / Disable triggering updates instantly on startup or after pushing a release. Only supported by supervisor versions >= v9.13.0.",
    "true",
  ),
  RESIN_OVERRIDE_LOCK: {
    type: "integer",
    enum: [0, 1],
    description: "Override the update lock if your app locked updates but is stuck in an invalid state.",
    default: 0,
  },
  BALENA_HOST_SPLASH_IMAGE: {
    type: "string",
    format: "data-url",
    description:
      "Define the PNG image to be used for the boot splash screen. Only supported by supervisor versions >= v12.3.0.",
    maxLength: 13_400,
  },
  BALENA_SUPERVISOR_HARDWARE_METRICS: onOff(
    "Enable / Disable reporting device metrics such as CPU usage for bandwidth conservation. Only supported by supervisor versions >= v12.8.0.",
    "true",
  ),
};

interface DeviceTypeProperties {
  readonly deviceTypes: readonly string[];
  readonly properties: Record<string, unknown>;
}

// balena's lists name device types by slug, shipped or not: an imported one with the same slug gets them too.
const TX2 = [
  "astro-tx2",
  "blackboard-tx2",
  "jetson-tx2",
  "n310-tx2",
  "n510-tx2",
  "orbitty-tx2",
  "spacely-tx2",
  "srd3-tx2",
];

const deviceTypeProperties: readonly DeviceTypeProperties[] = [
  {
    deviceTypes: [
      "fincm3",
      "npe-x500-m3",
      "raspberry-pi",
      "raspberry-pi2",
      "raspberrypi3",
      "raspberrypi3-64",
      "raspberrypi4-64",
      "raspberrypi400-64",
      "raspberrypicm4-ioboard",
      "revpi-core-3",
    ],
    properties: {
      RESIN_HOST_CONFIG_disable_splash: {
        enum: ["0", "1"],
        description: "Enable / Disable the rainbow splash screen",
        default: "1",
      },
      RESIN_HOST_CONFIG_dtparam: {
        type: "string",
        description: "Define DT parameters",
        default: '"i2c_arm=on","spi=on","audio=on"',
      },
      RESIN_HOST_CONFIG_dtoverlay: {
        type: "string",
        description: "Define DT overlays",
        examples: ['"i2c-rtc,ds1307","lirc-rpi"'],
      },
      RESIN_HOST_CONFIG_enable_uart: { enum: ["0", "1"], description: "Enable / Disable UART", default: "1" },
      RESIN_HOST_CONFIG_gpu_mem: {
        type: "integer",
        description: "Define device GPU memory in megabytes.",
        default: 16,
      },
      BALENA_HOST_CONFIG_hdmi_cvt: {
        type: "string",
        description: "Define a custom CVT mode for the HDMI",
        examples: ["480 360 60 1 0 0 0"],
      },
      BALENA_HOST_CONFIG_hdmi_force_hotplug: {
        type: "integer",
        enum: [0, 1],
        description: "Force the HDMI hotplug signal",
        default: 0,
      },
      BALENA_HOST_CONFIG_hdmi_group: {
        type: "integer",
        description: "Define the HDMI output group",
        examples: [2],
        default: 0,
      },
      BALENA_HOST_CONFIG_hdmi_mode: {
        type: "integer",
        description: "Define the HDMI output format",
        examples: [87],
        default: 1,
      },
      BALENA_HOST_CONFIG_display_rotate: {
        type: "string",
        description: "Define the rotation or flip of the display",
        examples: ["1", "0x10000"],
        default: "0",
      },
    },
  },
  {
    deviceTypes: TX2,
    properties: {
      RESIN_HOST_ODMDATA_configuration: {
        type: "integer",
        oneOf: [1, 2, 3, 4, 5, 6].map((n) => ({ const: n, title: `Configuration #${n}` })),
        description: "Define the ODMDATA configuration. Only supported by supervisor versions >= v11.13.0.",
        default: 2,
      },
    },
  },
  {
    deviceTypes: [
      ...TX2,
      "jetson-nano",
      "jetson-nano-emmc",
      "jn30b-nano",
      "photon-nano",
      "jetson-tx2-nx-devkit",
      "photon-tx2-nx",
    ],
    properties: {
      RESIN_HOST_EXTLINUX_fdt: {
        type: "string",
        description:
          "Define the file name of the DTB to be used. Only supported by supervisor versions >= v11.14.2.",
      },
    },
  },
  {
    deviceTypes: ["up-board"],
    properties: {
      RESIN_HOST_CONFIGFS_ssdt: {
        type: "string",
        description: "Define SSDT overlays. Only supported by supervisor versions >= v10.9.2.",
        examples: ['"spidev1.0","spidev1.1"'],
      },
    },
  },
];

/** The answer of `GET /config/vars[?deviceType=<slug>]`; an unknown slug adds nothing, as in balena. */
export function configVarsDocument(deviceType: unknown) {
  return {
    reservedNames: ["RESIN", "BALENA", "USER"],
    reservedNamespaces: RESERVED_NAMESPACES,
    invalidRegex: String(/^\d|\W/),
    whiteListedNames: withPrefixes([
      "APP_RESTART_POLICY",
      "APP_RESTART_RETRIES",
      "DEPENDENT_DEVICES_HOOK_ADDRESS",
      "OVERRIDE_LOCK",
      "SUPERVISOR_CONNECTIVITY_CHECK",
      "SUPERVISOR_HANDOVER_TIMEOUT",
      "SUPERVISOR_LOCAL_MODE",
      "SUPERVISOR_LOG_CONTROL",
      "SUPERVISOR_POLL_INTERVAL",
      "SUPERVISOR_UPDATE_STRATEGY",
      "SUPERVISOR_VPN_CONTROL",
      "SUPERVISOR_PERSISTENT_LOGGING",
      "SUPERVISOR_INSTANT_UPDATE_TRIGGER",
      "SUPERVISOR_HARDWARE_METRICS",
    ]),
    whiteListedNamespaces: withPrefixes(["HOST_", "UI_"]),
    blackListedNames: withPrefixes([
      "RESTART",
      "DEVICE_RESTART",
      "SUPERVISOR_OVERRIDE_LOCK",
      "SUPERVISOR_NATIVE_LOGGER",
      "HOST_LOG_TO_DISPLAY",
    ]),
    configVarSchema: {
      type: "object",
      $schema: "http://json-schema.org/draft-06/schema#",
      properties: Object.assign(
        {},
        supervisorProperties,
        ...deviceTypeProperties
          .filter((group) => typeof deviceType === "string" && group.deviceTypes.includes(deviceType))
          .map((group) => group.properties),
      ),
    },
  };
}
