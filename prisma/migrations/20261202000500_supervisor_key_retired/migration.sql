-- Issue 30: the supervisor keys a device retired when the proxy had it regenerate its key (SHA-256
-- fingerprints, newest first). The proxy stores the new key from the device's answer; a state report
-- sent before the regeneration and recorded after it carries a retired key, which is not stored
-- again (src/devices/state.ts), so the cloud keeps reaching the device.
ALTER TABLE "device" ADD COLUMN "supervisor_api_key_retired" TEXT;
