SELECT count(*)::int AS count
  FROM "device" "t0"
  WHERE (TRUE)
-- params: []
