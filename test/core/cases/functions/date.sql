SELECT count(*)::int AS count
  FROM "device" "t0"
  WHERE (TRUE) AND (("t0"."last_connectivity_event")::date = ($1::timestamptz)::date)
-- params: ["2026-11-01T00:00:00.000Z"]
