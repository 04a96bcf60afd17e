-- The change bus (src/db/channels.ts): every change that can alter a device's target state (what
-- src/devices/target.ts reads, and the rows its permissions read) is announced on
-- 'fleetgate_target' when its transaction commits, whichever writer made it (the write core, the
-- shell, plain SQL, a cascade). The target-state cache of every instance (src/devices/target-cache.ts)
-- forgets what the payload names: 'device:<id>', 'fleet:<id>', 'release:<id>', or 'all'.
-- The trigger's arguments: the payload's kind and the row's column that holds the id.
CREATE FUNCTION "fleetgate_notify_target"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('fleetgate_target', TG_ARGV[0] || ':' || (to_jsonb(OLD) ->> TG_ARGV[1]));
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM pg_notify('fleetgate_target', TG_ARGV[0] || ':' || (to_jsonb(NEW) ->> TG_ARGV[1]));
  END IF;
  RETURN NULL;
END
$$;

-- Whatever no row trigger sees (a TRUNCATE), or changes what every device may read (a fleet made
-- public or private: its final releases are readable by devices of other fleets).
CREATE FUNCTION "fleetgate_notify_target_all"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('fleetgate_target', 'all');
  RETURN NULL;
END
$$;

-- The device's own columns that its target reads or its permissions take; a state report writes
-- none of them, so it announces nothing.
CREATE TRIGGER "device_target_changed" AFTER UPDATE ON "device"
  FOR EACH ROW WHEN (OLD."id" IS DISTINCT FROM NEW."id" OR OLD."uuid" IS DISTINCT FROM NEW."uuid"
    OR OLD."device_name" IS DISTINCT FROM NEW."device_name" OR OLD."actor" IS DISTINCT FROM NEW."actor"
    OR OLD."should_be_running__release" IS DISTINCT FROM NEW."should_be_running__release"
    OR OLD."belongs_to__application" IS DISTINCT FROM NEW."belongs_to__application")
  EXECUTE FUNCTION "fleetgate_notify_target"('device', 'id');
CREATE TRIGGER "device_target_deleted" AFTER DELETE ON "device"
  FOR EACH ROW EXECUTE FUNCTION "fleetgate_notify_target"('device', 'id');

CREATE TRIGGER "device_environment_variable_target" AFTER INSERT OR UPDATE OR DELETE ON "device_environment_variable"
  FOR EACH ROW EXECUTE FUNCTION "fleetgate_notify_target"('device', 'device');
CREATE TRIGGER "device_config_variable_target" AFTER INSERT OR UPDATE OR DELETE ON "device_config_variable"
  FOR EACH ROW EXECUTE FUNCTION "fleetgate_notify_target"('device', 'device');
CREATE TRIGGER "application_environment_variable_target" AFTER INSERT OR UPDATE OR DELETE ON "application_environment_variable"
  FOR EACH ROW EXECUTE FUNCTION "fleetgate_notify_target"('fleet', 'application');
CREATE TRIGGER "application_config_variable_target" AFTER INSERT OR UPDATE OR DELETE ON "application_config_variable"
  FOR EACH ROW EXECUTE FUNCTION "fleetgate_notify_target"('fleet', 'application');

-- A fleet's and a release's rows are compared whole (as text: json has no equality operator):
-- they change seldom, and any of their columns may one day be read by a target.
CREATE TRIGGER "application_target_changed" AFTER UPDATE ON "application"
  FOR EACH ROW WHEN (OLD::text IS DISTINCT FROM NEW::text)
  EXECUTE FUNCTION "fleetgate_notify_target"('fleet', 'id');
CREATE TRIGGER "application_target_deleted" AFTER DELETE ON "application"
  FOR EACH ROW EXECUTE FUNCTION "fleetgate_notify_target"('fleet', 'id');
CREATE TRIGGER "application_publicity_changed" AFTER UPDATE ON "application"
  FOR EACH ROW WHEN (OLD."is_public" IS DISTINCT FROM NEW."is_public")
  EXECUTE FUNCTION "fleetgate_notify_target_all"();
CREATE TRIGGER "release_target_changed" AFTER UPDATE ON "release"
  FOR EACH ROW WHEN (OLD::text IS DISTINCT FROM NEW::text)
  EXECUTE FUNCTION "fleetgate_notify_target"('release', 'id');
CREATE TRIGGER "release_target_deleted" AFTER DELETE ON "release"
  FOR EACH ROW EXECUTE FUNCTION "fleetgate_notify_target"('release', 'id');

CREATE TRIGGER "device_target_truncated" AFTER TRUNCATE ON "device"
  FOR EACH STATEMENT EXECUTE FUNCTION "fleetgate_notify_target_all"();
CREATE TRIGGER "application_target_truncated" AFTER TRUNCATE ON "application"
  FOR EACH STATEMENT EXECUTE FUNCTION "fleetgate_notify_target_all"();
CREATE TRIGGER "release_target_truncated" AFTER TRUNCATE ON "release"
  FOR EACH STATEMENT EXECUTE FUNCTION "fleetgate_notify_target_all"();
CREATE TRIGGER "device_environment_variable_target_truncated" AFTER TRUNCATE ON "device_environment_variable"
  FOR EACH STATEMENT EXECUTE FUNCTION "fleetgate_notify_target_all"();
CREATE TRIGGER "device_config_variable_target_truncated" AFTER TRUNCATE ON "device_config_variable"
  FOR EACH STATEMENT EXECUTE FUNCTION "fleetgate_notify_target_all"();
CREATE TRIGGER "application_environment_variable_target_truncated" AFTER TRUNCATE ON "application_environment_variable"
  FOR EACH STATEMENT EXECUTE FUNCTION "fleetgate_notify_target_all"();
CREATE TRIGGER "application_config_variable_target_truncated" AFTER TRUNCATE ON "application_config_variable"
  FOR EACH STATEMENT EXECUTE FUNCTION "fleetgate_notify_target_all"();
