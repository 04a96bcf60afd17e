import type { VersionStep } from "./step.ts";

// v7 (balena-sdk 20 and later) against v6, the core's version (pinejs-wire-format.md, v6→v7):
// - a device's writable release is its pin, `is_pinned_on__release`; `should_be_running__release`
//   is read-only, computed as the pin, else the fleet's target;
// - a device's supervisor is `should_be_managed_by__release` (a release, as in balena's v7 model):
//   v6's `supervisor_release` resource and the device's link to it are gone;
// - `actor` is a link (`{"__id"}`);
// - overall_status and overall_progress follow balena's v7 rule (src/core/sql/computed.ts): it says
//   `disconnected`, `reduced-functionality` and `operational` where v6 says `offline` and `idle`;
// - a device's `changed_api_heartbeat_state_on__date`, which v6 does not serve;
// - `my_application`, a device's managing device and logs channel, and fleet dependencies are gone;
// - a successful PATCH, PUT or DELETE answers an empty body, not v6's "OK".
export const v7: VersionStep = {
  version: "v7",
  to: "v6",
  missingResources: ["my_application", "supervisor_release"],
  renamed: {
    device: {
      is_pinned_on__release: "should_be_running__release",
    },
    release: { is_pinned_to__device: "should_be_running_on__device" },
  },
  missing: {
    device: [
      "is_managed_by__device",
      "manages__device",
      "logs_channel",
      "should_be_managed_by__supervisor_release",
    ],
    application: ["depends_on__application", "is_depended_on_by__application"],
  },
  links: {
    device: {
      should_be_running__release: {
        firstOf: [["should_be_running__release"], ["belongs_to__application", "should_be_running__release"]],
        target: "release",
      },
      actor: { firstOf: [["actor"]] },
    },
    application: { actor: { firstOf: [["actor"]] } },
    user: { actor: { firstOf: [["actor"]] } },
  },
  hidden: {
    device: {
      overall_status: "overall_status_v7",
      overall_progress: "overall_progress_v7",
      changed_api_heartbeat_state_on__date: "changed_api_heartbeat_state_on__date",
    },
  },
  writeReply: "empty",
};
