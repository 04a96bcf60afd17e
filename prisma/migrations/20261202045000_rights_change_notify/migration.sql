-- Reads on replicas (README "Reads on replicas", src/db/replicas.ts): a change of the rows that
-- permission predicates read (src/auth/policies.ts) narrows what a caller may read, and must count
-- from the next read on even while a replica lags. So it is announced on 'fleetgate_credential'
-- like a credential that ended (migration 20261201000300), whichever writer made it: a membership
-- deleted or changed (its role: an organization's administrator demoted), a fleet moved to another
-- organization or made private or public, a device given to or taken from a user. Reads wait until
-- the replicas have replayed past it; the instance that hears it forgets the actor's cached callers.
-- A membership's payload is its user's actor (empty when the user is being deleted with it: the
-- user's own trigger names the actor).
CREATE FUNCTION "fleetgate_notify_membership"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('fleetgate_credential', COALESCE((SELECT "actor"::text FROM "user" WHERE "id" = OLD."user"), ''));
  RETURN NULL;
END
$$;

CREATE TRIGGER "organization_membership_deleted" AFTER DELETE ON "organization_membership"
  FOR EACH ROW EXECUTE FUNCTION "fleetgate_notify_membership"();
CREATE TRIGGER "organization_membership_changed" AFTER UPDATE ON "organization_membership"
  FOR EACH ROW WHEN (OLD IS DISTINCT FROM NEW) EXECUTE FUNCTION "fleetgate_notify_membership"();

CREATE TRIGGER "application_rights_changed" AFTER UPDATE ON "application"
  FOR EACH ROW WHEN (OLD."organization" IS DISTINCT FROM NEW."organization" OR OLD."is_public" IS DISTINCT FROM NEW."is_public")
  EXECUTE FUNCTION "fleetgate_notify_credential"('actor');
CREATE TRIGGER "device_user_changed" AFTER UPDATE ON "device"
  FOR EACH ROW WHEN (OLD."belongs_to__user" IS DISTINCT FROM NEW."belongs_to__user")
  EXECUTE FUNCTION "fleetgate_notify_credential"('actor');
