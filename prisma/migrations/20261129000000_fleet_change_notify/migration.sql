-- The change bus (src/events/channels.ts): an updated fleet row is announced on 'fleetgate_fleet'
-- with its id, whichever surface or system write changed it, when its transaction commits.
CREATE FUNCTION "fleetgate_notify_fleet"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('fleetgate_fleet', NEW."id"::text);
  RETURN NULL;
END
$$;

-- Compared as text: a row comparison needs an equality operator for every column's type, and a
-- json column (which has none) added later would make every fleet update fail.
CREATE TRIGGER "application_changed" AFTER UPDATE ON "application"
  FOR EACH ROW WHEN (OLD::text IS DISTINCT FROM NEW::text) EXECUTE FUNCTION "fleetgate_notify_fleet"();
