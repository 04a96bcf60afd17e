-- A device's status history (issue 48): every change of its overall_status, whichever writer made
-- it (a state report, single or batched; the offline sweep; an OData or GraphQL PATCH; the shell;
-- plain SQL), is recorded by a trigger on "device" when the row changes. Read through the model as
-- the read-only resource device_status_change (a device's navigation device_status_change, GraphQL
-- Device.deviceStatusChange), with the device's own read permission.
CREATE TABLE "device_status_change" (
    "id" SERIAL NOT NULL,
    "device" INTEGER NOT NULL,
    "old_status" TEXT NOT NULL,
    "new_status" TEXT NOT NULL,
    "changed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "device_status_change_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "device_status_change_device_id_idx" ON "device_status_change"("device", "id");

ALTER TABLE "device_status_change" ADD CONSTRAINT "device_status_change_device_fkey" FOREIGN KEY ("device") REFERENCES "device"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- overall_status, the v6 rule of src/core/sql/computed.ts (`overallStatus`) over the columns it
-- reads; test/devices/status-history.test.ts holds the two equal. It reads only the row's own
-- columns, never the time, so a status changes only when the row does.
CREATE FUNCTION "fleetgate_device_status"(
  "is_active" boolean, "provisioning_state" text, "is_online" boolean,
  "last_connectivity_event" timestamptz, "api_heartbeat_state" text,
  "download_progress" integer, "status" text, "provisioning_progress" integer
) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN NOT "is_active" THEN 'inactive'
    WHEN "provisioning_state" = 'Post-Provisioning' THEN 'post-provisioning'
    WHEN NOT "is_online" AND "last_connectivity_event" IS NULL
      AND "api_heartbeat_state" = 'unknown' THEN 'configuring'
    WHEN NOT "is_online" AND "api_heartbeat_state" IN ('offline', 'unknown') THEN 'offline'
    WHEN "download_progress" IS NOT NULL AND "status" = 'Downloading' THEN 'updating'
    WHEN "provisioning_progress" IS NOT NULL THEN 'configuring'
    ELSE 'idle' END
$$;

-- Bounded: a device keeps its newest 100 changes; each change deletes what falls beyond them (an
-- index scan of at most 101 entries of ("device", "id")). A status change is also announced on the
-- change bus (channels.device, `<device id>:<fleet id>`), so GraphQL's deviceChanged and the console
-- hear a change made by any writer; PostgreSQL sends a payload once per transaction, so a state
-- report that announces the same device itself sends it once.
CREATE FUNCTION "fleetgate_record_status_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "device_status_change" ("device", "old_status", "new_status") VALUES (NEW."id",
    "fleetgate_device_status"(OLD."is_active", OLD."provisioning_state", OLD."is_online",
      OLD."last_connectivity_event", OLD."api_heartbeat_state", OLD."download_progress", OLD."status",
      OLD."provisioning_progress"),
    "fleetgate_device_status"(NEW."is_active", NEW."provisioning_state", NEW."is_online",
      NEW."last_connectivity_event", NEW."api_heartbeat_state", NEW."download_progress", NEW."status",
      NEW."provisioning_progress"));
  DELETE FROM "device_status_change" WHERE "device" = NEW."id" AND "id" <= (
    SELECT k."id" FROM "device_status_change" k WHERE k."device" = NEW."id"
    ORDER BY k."id" DESC OFFSET 100 LIMIT 1);
  PERFORM pg_notify('fleetgate_device', NEW."id"::text || ':' || NEW."belongs_to__application"::text);
  RETURN NULL;
END
$$;

-- Only an update whose status changes runs the function (a report that changes no status, nearly
-- every one, costs the two CASEs of the WHEN). A new device has no history: its registration
-- (created_at) is where it starts.
CREATE TRIGGER "device_status_changed" AFTER UPDATE ON "device"
  FOR EACH ROW WHEN ("fleetgate_device_status"(OLD."is_active", OLD."provisioning_state", OLD."is_online",
      OLD."last_connectivity_event", OLD."api_heartbeat_state", OLD."download_progress", OLD."status",
      OLD."provisioning_progress")
    IS DISTINCT FROM "fleetgate_device_status"(NEW."is_active", NEW."provisioning_state", NEW."is_online",
      NEW."last_connectivity_event", NEW."api_heartbeat_state", NEW."download_progress", NEW."status",
      NEW."provisioning_progress"))
  EXECUTE FUNCTION "fleetgate_record_status_change"();
