SELECT count(*)::int AS count
  FROM "device" "t0"
  WHERE (TRUE) AND ("t0"."belongs_to__application" = $1::int4)
-- params: [28]
