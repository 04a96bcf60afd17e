-- The change bus (src/events/channels.ts): a change that may end a credential or change what its
-- caller may do is announced on 'fleetgate_credential' with the actor's id, when its transaction
-- commits, whichever writer made it (the write core, the shell, a cascade): an API key deleted or
-- its expiry or hash changed; a user's password (which ends their sessions) or admin flag changed;
-- a user, fleet or device (whose keys then name no one) deleted. Open subscriptions resolve their
-- credential again (src/graphql/credential-watch.ts).
-- The trigger's argument names the row's actor column.
CREATE FUNCTION "fleetgate_notify_credential"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('fleetgate_credential', to_jsonb(OLD) ->> TG_ARGV[0]);
  RETURN NULL;
END
$$;

CREATE TRIGGER "api_key_deleted" AFTER DELETE ON "api_key"
  FOR EACH ROW EXECUTE FUNCTION "fleetgate_notify_credential"('is_of__actor');
CREATE TRIGGER "api_key_changed" AFTER UPDATE ON "api_key"
  FOR EACH ROW WHEN (OLD."expiry_date" IS DISTINCT FROM NEW."expiry_date" OR OLD."key_hash" IS DISTINCT FROM NEW."key_hash")
  EXECUTE FUNCTION "fleetgate_notify_credential"('is_of__actor');

CREATE TRIGGER "user_deleted" AFTER DELETE ON "user"
  FOR EACH ROW EXECUTE FUNCTION "fleetgate_notify_credential"('actor');
CREATE TRIGGER "user_credential_changed" AFTER UPDATE ON "user"
  FOR EACH ROW WHEN (OLD."password" IS DISTINCT FROM NEW."password" OR OLD."jwt_secret" IS DISTINCT FROM NEW."jwt_secret"
    OR OLD."is_admin" IS DISTINCT FROM NEW."is_admin")
  EXECUTE FUNCTION "fleetgate_notify_credential"('actor');

CREATE TRIGGER "application_deleted_credential" AFTER DELETE ON "application"
  FOR EACH ROW EXECUTE FUNCTION "fleetgate_notify_credential"('actor');
CREATE TRIGGER "device_deleted_credential" AFTER DELETE ON "device"
  FOR EACH ROW EXECUTE FUNCTION "fleetgate_notify_credential"('actor');
