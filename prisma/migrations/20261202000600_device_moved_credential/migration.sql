-- A device moved to another fleet: its key's rights follow the fleet (it reads that fleet's
-- variables and releases), so the change is announced on 'fleetgate_credential' like a credential
-- that ended (migration 20261201000300): every instance forgets the cached caller of the device's
-- key, and an open subscription with that key resolves it again.
CREATE TRIGGER "device_moved_credential" AFTER UPDATE ON "device"
  FOR EACH ROW WHEN (OLD."belongs_to__application" IS DISTINCT FROM NEW."belongs_to__application")
  EXECUTE FUNCTION "fleetgate_notify_credential"('actor');
