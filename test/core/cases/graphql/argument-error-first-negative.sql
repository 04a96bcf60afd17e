SELECT count(*)::int AS count
  FROM "device" "t0"
  WHERE (TRUE) AND ("t0"."id" < $1::int4)
-- params: [3]
