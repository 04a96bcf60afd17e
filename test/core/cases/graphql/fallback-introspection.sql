SELECT count(*)::int AS count
  FROM "device_tag" "t0"
  WHERE (TRUE)
-- params: []
