SELECT count(*)::int AS count
  FROM "device" "t0"
  WHERE (TRUE) AND ("t0"."is_online" = $1::bool)
-- params: [true]
